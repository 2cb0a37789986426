import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { peakRssMb } from './rss.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The secrets key of the service under test on PostgreSQL, where it must be given (SECRETS_KEY); a benchmark key,
 * known to all. The embedded database makes its own key file in DATA_DIR.
 */
const BENCH_SECRETS_KEY = 'nGmqkT7XmK3r1UeV0u2gkV9kqWm0bRj3CeE3yW7cJvY=';

/** The service under test: the compiled CLI (`serve`, see build.ts) in a process of its own, as in production. */
export class ServiceProcess {
  /** What the service logged, but for the per-request lines: the harness reads the cleanup's report here. */
  readonly logLines: Record<string, unknown>[] = [];
  baseUrl = '';
  readonly #exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (entry.msg !== 'incoming request' && entry.msg !== 'request completed') this.logLines.push(entry);
        } catch {
          // not a log line
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    this.#exited = new Promise((resolve) => child.on('exit', resolve));
  }

  /** Starts it on a free port (PORT=0); answers once it has said where it listens and /health answers. */
  static async start(cli: string, env: Record<string, string>, profileDir?: string): Promise<ServiceProcess> {
    const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const child = spawn(process.execPath, [...profile, cli, 'serve'], {
      cwd: ROOT,
      env: { ...process.env, ...(env.DATABASE_URL ? { SECRETS_KEY: BENCH_SECRETS_KEY } : {}), ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} while starting`);
      const serving = service.logLines.find((l) => l.msg === 'alert-webhooks is serving');
      if (serving) {
        service.baseUrl = String(serving.address);
        const response = await request(`${service.baseUrl}/health`);
        await response.body.dump();
        if (response.statusCode === 200) return service;
      }
      if (Date.now() > deadline) throw new Error('the service did not start within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Peak resident memory of the service process so far (Linux VmHWM), in MB. */
  peakRssMb(): number {
    return peakRssMb(this.child.pid!);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const code = await this.#exited;
    if (code !== 0) throw new Error(`the service exited with ${code} on SIGTERM`);
  }
}
