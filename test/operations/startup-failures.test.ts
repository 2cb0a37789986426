import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type Finished } from '../support/processes.js';
import { ADMIN_PASSWORD, openTestDatabase } from '../support/test-service.js';
import { dbEnv, freePort } from '../cli/cli-support.js';

// A start that fails for a reason in the environment ends with one line naming it and what to do, exit code 1, and
// no stack trace. Each with a real `serve` process.

/** What a failed start printed on stderr: exactly one line, no stack, and the exit code. */
function oneLine(finished: Finished): string {
  expect(finished.code, finished.stdout + finished.stderr).toBe(1);
  const lines = finished.stderr.trim().split('\n');
  expect(lines, finished.stderr).toHaveLength(1);
  expect(finished.stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

describe('clear start-up failures', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function occupiedPort(): Promise<number> {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return (server.address() as AddressInfo).port;
  }

  it('a port in use (PORT, and METRICS_PORT for ROLE=worker)', async () => {
    const testDb = await openTestDatabase();
    cleanups.push(() => testDb.dispose());
    await testDb.db.close();
    const port = await occupiedPort();
    const env = { ...dbEnv(testDb), HOST: '127.0.0.1', ADMIN_PASSWORD };
    const api = await runCli(['serve'], { ...env, PORT: String(port) }).finished;
    expect(oneLine(api)).toBe(`alert-webhooks: cannot listen on 127.0.0.1:${port}: the port is in use by another process. Stop that process, or set PORT to a free port.`);
    const worker = await runCli(['serve'], { ...env, ROLE: 'worker', METRICS_PORT: String(port) }).finished;
    expect(oneLine(worker)).toBe(`alert-webhooks: cannot listen on 127.0.0.1:${port}: the port is in use by another process. Stop that process, or set METRICS_PORT to a free port.`);
  }, 90_000);

  it('an unreachable PostgreSQL, its password never shown', async () => {
    const port = await freePort();
    const url = `postgres://postgres:never-shown@127.0.0.1:${port}/alert_webhooks`;
    const finished = await runCli(['serve'], { DATABASE_URL: url, HOST: '127.0.0.1', PORT: '0' }).finished;
    expect(oneLine(finished)).toBe(
      `alert-webhooks: cannot use PostgreSQL at postgres://postgres:***@127.0.0.1:${port}/alert_webhooks: nothing accepts connections there (ECONNREFUSED). ` +
        'Check DATABASE_URL, and that the server runs and accepts this user from this machine.',
    );
    expect(finished.stdout + finished.stderr).not.toContain('never-shown');
  }, 60_000);

  it('a DATA_DIR that cannot be written (under a regular file)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'aw-startup-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'file'), 'not a directory');
    const dataDir = path.join(dir, 'file', 'data');
    const finished = await runCli(['serve'], { DATABASE_URL: '', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' }).finished;
    expect(oneLine(finished)).toBe(
      `alert-webhooks: cannot write DATA_DIR ${dataDir}: a part of the path is a file, not a directory (ENOTDIR on ${dataDir}). ` +
        'Set DATA_DIR to a directory this user can write (it is created if missing), or use PostgreSQL (DATABASE_URL).',
    );
  }, 60_000);

  it('a bad environment value', async () => {
    const finished = await runCli(['serve'], { PORT: 'abc' }).finished;
    expect(oneLine(finished)).toBe('alert-webhooks: PORT must be an integer from 0 to 65535, got "abc"');
    const metrics = await runCli(['serve'], { METRICS_PORT: '-1' }).finished;
    expect(oneLine(metrics)).toBe('alert-webhooks: METRICS_PORT must be an integer from 0 to 65535, got "-1"');
  }, 60_000);
});
