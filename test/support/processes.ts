import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// tsx's loader inside the one process, rather than its CLI, which runs the script in a child process of its own:
// then the pid and the signals a test sends (SIGKILL above all, which cannot be relayed) are the service's.
const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/**
 * The secrets key of every test service on PostgreSQL (SECRETS_KEY, base64 of 32 bytes), in-process or not: every
 * process on one database must seal and open with the same key. A test key, known to all: never use it elsewhere.
 */
export const TEST_SECRETS_KEY = 'CQ1nvDVIFtW9ABJF0DUzZNcjOVE5ayVquirlt4lfcrA=';

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  finished: Promise<Finished>;
  /** What the process printed so far, stdout then stderr. */
  output(): string;
  /** Resolves once the process printed something matching `pattern`; rejects if it exits first or after `timeoutMs`. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/**
 * Runs `src/cli.ts <args>` as a real process (node with tsx's loader; `child.pid` is its pid) with the given environment.
 * On PostgreSQL (a DATABASE_URL) it gets TEST_SECRETS_KEY unless `env` names a key (or sets SECRETS_KEY to '' for none).
 */
export function runCli(args: string[], env: Record<string, string>): CliRun {
  const needsKey = Boolean(env.DATABASE_URL) && !('SECRETS_KEY' in env) && !('SECRETS_KEY_FILE' in env);
  const child = spawn(process.execPath, ['--import', TSX_LOADER, 'src/cli.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...(needsKey ? { SECRETS_KEY: TEST_SECRETS_KEY } : {}), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watcher of [...watchers]) watcher();
  };
  child.stdout!.on('data', (chunk: Buffer) => ((stdout += chunk.toString()), notify()));
  child.stderr!.on('data', (chunk: Buffer) => ((stderr += chunk.toString()), notify()));
  const finished = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => {
      exited = true;
      resolve({ code, signal, stdout, stderr });
      notify();
    }),
  );
  const output = () => stdout + stderr;
  const waitForOutput = (pattern: RegExp, timeoutMs = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(output())) done();
        else if (exited) done(new Error(`process exited before printing ${pattern}:\n${output()}`));
      };
      const timer = setTimeout(() => done(new Error(`process did not print ${pattern} within ${timeoutMs} ms:\n${output()}`)), timeoutMs);
      const done = (err?: Error) => {
        clearTimeout(timer);
        watchers.delete(check);
        if (err) reject(err);
        else resolve();
      };
      watchers.add(check);
      check();
    });
  return { child, finished, output, waitForOutput };
}

/**
 * Stops a process started by `runCli` (if it still runs) with `signal` and waits for it to exit; one that has not
 * exited after `killAfterMs` gets SIGKILL, so a test's clean-up never leaves a process behind.
 */
export async function stopCli(run: Pick<CliRun, 'child' | 'finished'>, signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 20_000): Promise<Finished> {
  const running = () => run.child.exitCode === null && run.child.signalCode === null;
  if (running()) run.child.kill(signal);
  const timer = setTimeout(() => {
    if (running()) run.child.kill('SIGKILL');
  }, killAfterMs);
  try {
    return await run.finished;
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` until it answers true (rejects after `timeoutMs`, saying `what`). */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
