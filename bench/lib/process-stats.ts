import { readdirSync, readFileSync } from 'node:fs';

/*
 * CPU time and context switches of groups of processes over a window, from Linux's /proc: what a delivery costs each
 * process, in figures a busy machine moves far less than wall-clock ones (a process pays for its own work whether or
 * not it waits for a core; the wait shows as involuntary switches, not as CPU).
 *
 * Processes that start and end inside the window (a PostgreSQL backend of a pool that closes an idle connection) are
 * caught by sampling every SAMPLE_MS: a process gone between two samples loses at most that much of its count.
 */

// /proc reports CPU times in USER_HZ clock ticks, which Linux fixes at 100 a second for user space on every platform.
const TICKS_PER_SECOND = 100;
const SAMPLE_MS = 250;

/** One process's (all its threads') or one thread's cumulative counters. */
export interface Counters {
  cpuSeconds: number;
  voluntary: number;
  involuntary: number;
}

/** A group's totals over the window. */
export interface GroupUse {
  /** Processes seen in the group during the window. */
  processes: number;
  cpuSeconds: number;
  /** Context switches, every thread of every process in the group. */
  voluntary: number;
  involuntary: number;
}

/** Decides, once per process id, which group a process belongs to (undefined: none, not followed). */
export type Classifier = (pid: number, cmdline: string, comm: string) => string | undefined;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // it ended meanwhile
  }
}

/**
 * CPU seconds (user + system) of a process (all its threads), or of one thread with `tid`, from its `stat`. A process
 * of one thread (a PostgreSQL backend) is read from its `schedstat` instead, in nanoseconds: in clock ticks, a backend
 * that served a short drain could show 0 (10 ms a tick). A process of several threads keeps `stat`, which also counts
 * its threads that ended.
 */
function cpuSeconds(pid: number, tid?: number): number | undefined {
  const stat = read(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`);
  if (stat === undefined) return undefined;
  // The command name, in parentheses, may hold spaces: the fields are counted from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (tid === undefined && fields[17] === '1') {
    const onCpuNs = Number(read(`/proc/${pid}/schedstat`)?.split(' ')[0]);
    if (Number.isFinite(onCpuNs)) return onCpuNs / 1e9;
  }
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Voluntary and involuntary context switches of every thread of a process (its `status` counts the main thread only). */
function switches(pid: number): { voluntary: number; involuntary: number } | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let voluntary = 0;
  let involuntary = 0;
  for (const tid of tasks) {
    const status = read(`/proc/${pid}/task/${tid}/status`);
    if (status === undefined) continue;
    voluntary += Number(/\bvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  return { voluntary, involuntary };
}

function counters(pid: number): Counters | undefined {
  const cpu = cpuSeconds(pid);
  const sw = switches(pid);
  return cpu === undefined || sw === undefined ? undefined : { cpuSeconds: cpu, ...sw };
}

/**
 * A process's main thread alone: its CPU and its context switches (its `status` counts this thread's only). For a
 * Node process, the event loop: its JavaScript, and each of its wake-ups.
 */
export function mainThread(pid: number): Counters {
  const status = read(`/proc/${pid}/status`) ?? '';
  return {
    cpuSeconds: cpuSeconds(pid, pid) ?? 0,
    voluntary: Number(/\bvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
    involuntary: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
  };
}

/** The machine's busy and idle CPU seconds, all cores (the first line of /proc/stat). */
export function machineSeconds(): { busy: number; idle: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!; // idle + iowait
  const all = fields.slice(0, 8).reduce((a, b) => a + b, 0); // user … steal (guest time is inside user)
  return { busy: (all - idle) / TICKS_PER_SECOND, idle: idle / TICKS_PER_SECOND };
}

/** The 1-minute load average. */
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/**
 * Follows the processes `classify` puts in a group, from `start()` to `stop()`: each process's counters at the start
 * (zero for one born later) and at its last sample, summed per group. One instance per window: a process id is
 * classified once.
 */
export class ProcessGroups {
  readonly #classify: Classifier;
  readonly #groupOf = new Map<number, string | undefined>();
  readonly #first = new Map<number, Counters>();
  readonly #last = new Map<number, Counters>();
  #timer: NodeJS.Timeout | undefined;
  #machineAtStart = machineSeconds();
  #startedAt = 0;
  #seconds = 0;
  #machine = { busy: 0, idle: 0 };

  constructor(classify: Classifier) {
    this.#classify = classify;
  }

  start(): void {
    this.#first.clear();
    this.#last.clear();
    this.#startedAt = performance.now();
    this.#machineAtStart = machineSeconds();
    this.#sample(true);
    this.#timer = setInterval(() => this.#sample(false), SAMPLE_MS);
  }

  /** Ends the window: answers each group's use, the window's length and the machine's busy and idle CPU seconds. */
  stop(): { seconds: number; groups: Record<string, GroupUse>; machine: { busy: number; idle: number } } {
    clearInterval(this.#timer);
    this.#sample(false);
    this.#seconds = (performance.now() - this.#startedAt) / 1000;
    const end = machineSeconds();
    this.#machine = { busy: end.busy - this.#machineAtStart.busy, idle: end.idle - this.#machineAtStart.idle };
    const groups: Record<string, GroupUse> = {};
    for (const [pid, first] of this.#first) {
      const group = this.#groupOf.get(pid)!;
      const last = this.#last.get(pid) ?? first;
      const use = (groups[group] ??= { processes: 0, cpuSeconds: 0, voluntary: 0, involuntary: 0 });
      use.processes++;
      use.cpuSeconds += last.cpuSeconds - first.cpuSeconds;
      use.voluntary += last.voluntary - first.voluntary;
      use.involuntary += last.involuntary - first.involuntary;
    }
    return { seconds: this.#seconds, groups, machine: this.#machine };
  }

  /** `atStart`: the window's first sample; a process first seen later was born in the window, all its use in it. */
  #sample(atStart: boolean): void {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (!this.#groupOf.has(pid)) {
        const cmdline = read(`/proc/${pid}/cmdline`);
        const comm = read(`/proc/${pid}/comm`);
        if (cmdline === undefined || comm === undefined) continue;
        this.#groupOf.set(pid, this.#classify(pid, cmdline.replaceAll('\0', ' ').trim(), comm.trim()));
      }
      if (this.#groupOf.get(pid) === undefined) continue;
      const now = counters(pid);
      if (now === undefined) continue;
      if (!this.#first.has(pid)) this.#first.set(pid, atStart ? now : { cpuSeconds: 0, voluntary: 0, involuntary: 0 });
      this.#last.set(pid, now);
    }
  }
}
