import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReceiverStats } from './receiver.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The harness's handle on the receiver process (receiver.ts), over IPC. */
export class Receiver {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const child = fork(path.join(ROOT, 'bench/lib/receiver.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
    return new Receiver(child, `http://127.0.0.1:${port}/hook`);
  }

  #ask<T>(message: object, answer: string): Promise<T> {
    return new Promise((resolve) => {
      const onMessage = (m: { type: string } & T) => {
        if (m.type !== answer) return;
        this.child.off('message', onMessage);
        resolve(m);
      };
      this.child.on('message', onMessage);
      this.child.send(message);
    });
  }

  reset(measureLatency = false): Promise<unknown> {
    return this.#ask({ type: 'reset', measureLatency }, 'reset-done');
  }

  async stats(): Promise<ReceiverStats> {
    return (await this.#ask<{ stats: ReceiverStats }>({ type: 'stats' }, 'stats')).stats;
  }

  stop(): void {
    this.child.send({ type: 'stop' });
  }
}

