// Compiles the service, with the files tsc does not copy (the SQL migrations), and builds the web console
// (console/, type-checked, then bundled by Vite into <out>/public, which src/console/console.routes.ts serves), in
// one place for `npm run build` and the benchmark. `node scripts/build.mjs` builds dist/ incrementally, with
// declarations and source maps;
// `node scripts/build.mjs --out-dir DIR` makes a throwaway build in DIR: no incremental state (it lives in dist/
// and would tell tsc that DIR is already up to date), no declarations, no source maps.
import { spawnSync } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

// The mark of a complete build of dist/: `npm start` rebuilds only when a source is newer (build-if-changed.mjs).
const BUILD_STAMP = '.build-stamp';

const root = fileURLToPath(new URL('../', import.meta.url));
const at = process.argv.indexOf('--out-dir');
if (at >= 0 && !process.argv[at + 1]) throw new Error('usage: node scripts/build.mjs [--out-dir DIR]');
const outDir = at >= 0 ? path.resolve(process.argv[at + 1]) : path.join(root, 'dist');
const throwaway = at >= 0 ? ['--outDir', outDir, '--incremental', 'false', '--declaration', 'false', '--sourceMap', 'false'] : [];

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const { status } = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', ...throwaway], { cwd: root, stdio: 'inherit' });
if (status !== 0) process.exit(status ?? 1);
cpSync(path.join(root, 'src/db/migrations'), path.join(outDir, 'db/migrations'), { recursive: true });

const checked = spawnSync(process.execPath, [tsc, '-p', 'console/tsconfig.json'], { cwd: root, stdio: 'inherit' });
if (checked.status !== 0) process.exit(checked.status ?? 1);
const { build } = await import('vite');
await build({ configFile: path.join(root, 'console/vite.config.ts'), logLevel: 'warn', build: { outDir: path.join(outDir, 'public') } });
// Written last, so a build that failed half way leaves no stamp: scripts/build-if-changed.mjs builds again.
if (at < 0) writeFileSync(path.join(outDir, BUILD_STAMP), `${new Date().toISOString()}\n`);
