import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceBuild {
  /** The compiled CLI: `node <cli> serve`. */
  cli: string;
  dispose(): void;
}

/**
 * Compiles the service with the script `npm start` uses (scripts/build.mjs), into a directory of this run's own (two
 * runs at once, as the suite's two projects do, must not write one dist/ together). Inside the repo, so the compiled
 * code finds node_modules, with package.json beside it as in the repo. The compiled service is what production runs: measured here, the
 * same service run from source through tsx spent ~3% of the drain in tsx's helpers and loader hooks.
 */
export async function buildService(): Promise<ServiceBuild> {
  const dir = path.join(ROOT, 'bench/results', `build-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const outDir = path.join(dir, 'dist');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--out-dir', outDir], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`building the service failed (scripts/build.mjs exited with ${code})`))));
  }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  return { cli: path.join(outDir, 'cli.js'), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
