import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.js';

// `npm start` runs scripts/build-if-changed.mjs first: a build only when a source is newer than the last complete
// build. Tried on a copy of the script beside a stand-in build.mjs that counts its runs and writes the stamp as
// the real one does at its end (the real build takes some 20 s; what is tested is the decision).

const STAND_IN_BUILD = `import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
appendFileSync(new URL('../builds.log', import.meta.url), 'built\\n');
if (process.env.FAIL_BUILD) process.exit(1);
mkdirSync(new URL('../dist/', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/.build-stamp', import.meta.url), new Date().toISOString());
`;

describe('npm start', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'aw-start-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const prestart = (env: Record<string, string> = {}) => spawnSync(process.execPath, [path.join(root, 'scripts/build-if-changed.mjs')], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  const builds = () => readFileSync(path.join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean).length;

  it('builds when there is no build, not again when nothing changed, again after a source changes or a failed build', () => {
    expect(JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts.prestart).toBe('node scripts/build-if-changed.mjs');
    mkdirSync(path.join(root, 'scripts'));
    cpSync(path.join(REPO_ROOT, 'scripts/build-if-changed.mjs'), path.join(root, 'scripts/build-if-changed.mjs'));
    writeFileSync(path.join(root, 'scripts/build.mjs'), STAND_IN_BUILD);
    mkdirSync(path.join(root, 'src/delivery'), { recursive: true });
    writeFileSync(path.join(root, 'src/delivery/worker.ts'), 'export {};\n');
    writeFileSync(path.join(root, 'builds.log'), '');
    // Sources an hour old: the stamps written below are newer.
    const anHourAgo = new Date(Date.now() - 3_600_000);
    for (const file of ['src/delivery/worker.ts', 'src/delivery', 'src', 'scripts/build.mjs']) utimesSync(path.join(root, file), anHourAgo, anHourAgo);

    expect(prestart().status).toBe(0);
    expect(builds()).toBe(1);
    expect(prestart().status).toBe(0);
    expect(prestart().status).toBe(0);
    expect(builds()).toBe(1);

    writeFileSync(path.join(root, 'src/delivery/worker.ts'), 'export const changed = 1;\n');
    utimesSync(path.join(root, 'src/delivery/worker.ts'), new Date(), new Date(Date.now() + 1_000));
    // A build that fails leaves no new stamp: the start stops, and the next one builds again.
    expect(prestart({ FAIL_BUILD: '1' }).status).toBe(1);
    expect(builds()).toBe(2);
    expect(prestart().status).toBe(0);
    expect(builds()).toBe(3);
    expect(prestart().status).toBe(0);
    expect(builds()).toBe(3);
  });
});
