import { readdirSync, readFileSync } from 'node:fs';

/*
 * Where a drain's CPU went, read from Linux's /proc around it: whether the service's JavaScript thread was the limit,
 * or the database, or nothing (the machine idle while each process waited on another). Measured this way on
 * 24 November (PostgreSQL, 100,000 deliveries at 18,000/s): the service's main thread 0.69 of a core, PostgreSQL
 * 0.5, the receiver 0.3 and the machine idle 0.4 of its 2 cores; the ceiling's own client, by contrast, held its
 * one thread at 1.0. So that drain waited on round trips, not on a core.
 *
 * Busy time alone does not tell whether a thread had a core whenever it could run: with the service, the database
 * and the receiver on two cores, a thread ready to run may wait for one. The scheduler counts that wait
 * (`schedstat`), so the main thread's busy time plus its wait says how much of the drain it was runnable. Read on
 * 24 November (a slower day, PostgreSQL, 100,000 deliveries): the main thread busy 0.71–0.83 and waiting for a core
 * 0.15–0.23, so runnable 0.93–0.98 of the drain: the service's JavaScript was the limit, sharing the cores.
 */

// /proc reports CPU times in USER_HZ clock ticks, which Linux fixes at 100 a second for user space on every platform.
const TICKS_PER_SECOND = 100;

/** Cumulative CPU seconds at one moment. */
export interface CpuSample {
  at: number;
  /** The service process, all its threads (on PGlite, the embedded database's thread too). */
  service: number;
  /** The service's main thread: its JavaScript, where each delivery is signed and sent. */
  serviceMainThread: number;
  /** The time the main thread was ready to run but waited for a core (0 where the kernel does not say). */
  serviceMainThreadWaiting: number;
  /** Every local `postgres` process (none for PGlite, or for a PostgreSQL on another host). */
  postgres: number;
  receiver: number;
  /** The time the receiver's thread was ready to run but waited for a core. */
  receiverWaiting: number;
  /** The machine's idle (and I/O wait) time, summed over its cores. */
  machineIdle: number;
}

/** Cores used on average between two samples: the same parts, as CPU seconds per second. */
export type CpuUse = Omit<CpuSample, 'at'>;

/** The CPU seconds (user + system) of a process or thread, from its `stat` file; 0 if it is gone or unreadable. */
function cpuSeconds(statPath: string): number {
  let stat: string;
  try {
    stat = readFileSync(statPath, 'utf8');
  } catch {
    return 0;
  }
  // The command name, in parentheses, may hold spaces: the fields are counted from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The CPU seconds (user + system, all threads) process `pid` has used so far; 0 if it is gone. */
export function processCpuSeconds(pid: number): number {
  return cpuSeconds(`/proc/${pid}/stat`);
}

/** The seconds a thread (a process's main thread) has waited for a core, ready to run: `schedstat`'s second field. */
function waitingSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9 || 0;
  } catch {
    return 0;
  }
}

/** The CPU seconds of every process named `postgres` (the server and its backends, which a drain's claims run in). */
function postgresSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue; // it ended meanwhile
    }
    total += cpuSeconds(`/proc/${entry}/stat`);
  }
  return total;
}

function machineIdleSeconds(): number {
  // The first line of /proc/stat: "cpu user nice system idle iowait ...", summed over the cores.
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  return (Number(fields[4]) + Number(fields[5])) / TICKS_PER_SECOND;
}

export function sampleCpu(servicePid: number, receiverPid: number): CpuSample {
  return {
    at: performance.now(),
    service: cpuSeconds(`/proc/${servicePid}/stat`),
    serviceMainThread: cpuSeconds(`/proc/${servicePid}/task/${servicePid}/stat`),
    serviceMainThreadWaiting: waitingSeconds(servicePid),
    postgres: postgresSeconds(),
    receiver: cpuSeconds(`/proc/${receiverPid}/stat`),
    receiverWaiting: waitingSeconds(receiverPid),
    machineIdle: machineIdleSeconds(),
  };
}

export function cpuBetween(from: CpuSample, to: CpuSample): CpuUse {
  const seconds = (to.at - from.at) / 1000;
  const cores = (key: keyof CpuUse) => Math.round(((to[key] - from[key]) / seconds) * 100) / 100;
  return {
    service: cores('service'),
    serviceMainThread: cores('serviceMainThread'),
    serviceMainThreadWaiting: cores('serviceMainThreadWaiting'),
    postgres: cores('postgres'),
    receiver: cores('receiver'),
    receiverWaiting: cores('receiverWaiting'),
    machineIdle: cores('machineIdle'),
  };
}
