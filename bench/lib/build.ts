import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
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
export async function buildService(root = ROOT): Promise<ServiceBuild> {
  const dir = path.join(root, 'bench/results', `build-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const outDir = path.join(dir, 'dist');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/build.mjs'), '--out-dir', outDir], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`building the service failed (scripts/build.mjs exited with ${code})`))));
  }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  cpSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  return { cli: path.join(outDir, 'cli.js'), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The service as it was at git revision `ref`, compiled as buildService does: its tree is exported (`git archive`,
 * which changes nothing in the repository) into a directory beside the repo's results, with this checkout's
 * node_modules linked in (a revision whose dependencies differ needs its own install). For a side-by-side of a change
 * and what came before it, in one run.
 */
export async function buildServiceAt(ref: string): Promise<ServiceBuild> {
  const root = path.join(ROOT, 'bench/results', `tree-${process.pid}-${ref.replace(/\W/g, '_')}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  try {
    const archive = execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', ref], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', root], { input: archive });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const built = await buildService(root);
    return { cli: built.cli, dispose: () => rmSync(root, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}
