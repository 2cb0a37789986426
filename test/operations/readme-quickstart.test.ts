import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, stopCli, waitUntil } from '../support/processes.js';
import { ADMIN_PASSWORD, openTestDatabase } from '../support/test-service.js';
import { dbEnv, freePort, serve } from '../cli/cli-support.js';

// The README's quickstart, as a newcomer pastes it: its shell blocks taken from README.md and run by bash, as
// written, except the values its first lines set (where the service and the receiver are, the admin's password),
// against a fresh service and the example receiver, all on loopback. It ends with a delivery at the receiver.

/** The ```sh blocks of the README's Quickstart section, in order. */
function quickstartBlocks(): string[] {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quickstart');
  expect(start, 'README.md has a Quickstart section').toBeGreaterThan(0);
  const section = readme.slice(start, readme.indexOf('\n### ', start + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** Replaces the line `NAME=…` at the start of a line with `NAME=value`, insisting it is there. */
function setting(script: string, name: string, value: string): string {
  const pattern = new RegExp(`^${name}=.*$`, 'm');
  expect(script, `the quickstart sets ${name}`).toMatch(pattern);
  return script.replace(pattern, `${name}='${value}'`);
}

interface Shell {
  child: ChildProcess;
  output: () => string;
  done: Promise<number | null>;
}

/** bash running `script` in its own process group (so it and what it started can be stopped together). */
function bash(script: string, cwd: string, env: Record<string, string>): Shell {
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output, done: new Promise((resolve) => child.on('close', (code) => resolve(code))) };
}

describe('the README quickstart', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('run line by line against a fresh service, ends with a delivery at the example receiver', async () => {
    const blocks = quickstartBlocks();
    expect(blocks).toHaveLength(2);
    const [receiverBlock, script] = blocks as [string, string];

    // A fresh service: a new, empty embedded database (or a PostgreSQL database of its own), a known admin password.
    const testDb = await openTestDatabase();
    cleanups.push(() => testDb.dispose());
    await testDb.db.close();
    const fresh = mkdtempSync(path.join(os.tmpdir(), 'aw-quickstart-'));
    cleanups.push(() => rmSync(fresh, { recursive: true, force: true }));
    const env = testDb.kind === 'pglite' ? { DATABASE_URL: '', DATA_DIR: path.join(fresh, 'data') } : dbEnv(testDb);
    const { run, base } = await serve({ ...env, ADMIN_PASSWORD });
    cleanups.push(() => stopCli(run));

    // The example receiver, started by the README's line, from the repository as the README says.
    const receiverPort = await freePort();
    const receiver = bash(receiverBlock, REPO_ROOT, { PORT: String(receiverPort) });
    cleanups.push(async () => {
      try {
        process.kill(-receiver.child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await receiver.done;
    });
    await waitUntil(() => receiver.output().includes(`receiving webhooks on port ${receiverPort}`), 'the example receiver listens', 30_000);

    let pasted = setting(script, 'BASE', base);
    pasted = setting(pasted, 'RECEIVER', `http://localhost:${receiverPort}/`);
    pasted = setting(pasted, 'PASSWORD', ADMIN_PASSWORD);
    const shell = bash(pasted, fresh, {});
    cleanups.push(() => {
      try {
        process.kill(-shell.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    });
    const code = await shell.done;
    expect(code, shell.output()).toBe(0);

    // The receiver checked the signature (it answers 401 and says so otherwise) and printed the event.
    await waitUntil(() => receiver.output().includes('newCase on demo'), 'the receiver prints the delivery', 20_000);
    expect(receiver.output()).not.toContain('rejected');
    // The listing at the end shows that delivery.
    const listing = JSON.parse(shell.output().trim().split('\n').at(-1)!) as { items: { status: string; payload: { eventType: string } }[] };
    expect(listing.items.map((d) => d.payload.eventType)).toEqual(['newCase']);
  }, 60_000);
});
