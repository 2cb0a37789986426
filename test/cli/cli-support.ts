import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { REPO_ROOT, runCli, type CliRun, type Finished } from '../support/processes.js';
import { ADMIN_PASSWORD, type TestDatabase } from '../support/test-service.js';

/** The environment that points a CLI process at a test file's database (and nowhere else). */
export function dbEnv(testDb: TestDatabase): Record<string, string> {
  return testDb.kind === 'postgres' ? { DATABASE_URL: testDb.url!, DATA_DIR: '' } : { DATABASE_URL: '', DATA_DIR: testDb.dataDir! };
}

/** `alert-webhooks <args>` to its end. */
export async function cli(args: string[], env: Record<string, string>): Promise<Finished> {
  return runCli(args, env).finished;
}

/**
 * `alert-webhooks <args>` with `input` on its stdin, through bash's pipe as a user types it
 * (`printf … | alert-webhooks …`), so stdin is a pipe and not a terminal.
 */
export async function cliWithInput(args: string[], input: string, env: Record<string, string>): Promise<Finished> {
  const loader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
  const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const child = spawn('bash', ['-c', `printf '%s\\n' ${quoted(input)} | ${quoted(process.execPath)} --import ${quoted(loader)} src/cli.ts ${args.map(quoted).join(' ')}`], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** A loopback port nothing listens on right now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A `serve` process on loopback, answering once it listens, with its API's base URL. */
export async function serve(env: Record<string, string>): Promise<{ run: CliRun; base: string }> {
  const run = runCli(['serve'], { ROLE: 'all', HOST: '127.0.0.1', PORT: '0', ADMIN_PASSWORD, LOG_LEVEL: 'info', ...env });
  await run.waitForOutput(/alert-webhooks is serving/, 60_000);
  const address = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(run.output())?.[1];
  expect(address, run.output()).toBeDefined();
  return { run, base: address! };
}

/** POST /api/auth/login over HTTP: the status, and the session cookie when it succeeded. */
export async function signInOver(base: string, usernameOrEmail: string, password: string): Promise<{ status: number; cookie?: string }> {
  const response = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ usernameOrEmail, password }),
  });
  await response.body?.cancel();
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('aw.sid='))?.split(';')[0];
  return cookie ? { status: response.status, cookie } : { status: response.status };
}
