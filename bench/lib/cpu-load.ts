import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';

// Each load process spins on arithmetic and never sleeps nor makes a system call: a core's worth of work that the
// scheduler shares fairly (normal priority) with the contestants, as another tenant's busy process on a shared
// cloud machine would. The busy day of issue 30 had the raw ceiling at a quarter to a third of its quiet figure.
const SPIN = 'let x = 0; for (;;) { x = (x * 1103515245 + 12345) % 2147483648; }';

/** A fixed CPU load beside the contestants: one busy process per core (`os.cpus()`), started and stopped by the bench. */
export class CpuLoad {
  #children: ChildProcess[] = [];

  constructor(readonly processes = os.cpus().length) {}

  get pids(): number[] {
    return this.#children.map((c) => c.pid!);
  }

  get running(): boolean {
    return this.#children.length > 0;
  }

  start(): void {
    if (this.running) return;
    this.#children = Array.from({ length: this.processes }, () => spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }));
  }

  /** Kills the load processes at once, without waiting: for the harness's exit handler. */
  killNow(): void {
    for (const child of this.#children) child.kill('SIGKILL');
    this.#children = [];
  }

  /** Kills the load processes (by their own ids) and waits for them to be gone. */
  async stop(): Promise<void> {
    const children = this.#children;
    this.#children = [];
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }
}
