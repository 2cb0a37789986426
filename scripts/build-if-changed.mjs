// `npm start`'s first step: builds dist/ (scripts/build.mjs) only when it is missing or a file it is built from
// changed since the last complete build, so a restart takes the service's start time, not a build's (about 20 s
// here). Changed means newer than dist/.build-stamp, which build.mjs writes when it ends well; a checkout or an edit
// gives the files it touches a new time. `npm run build` still builds whatever the times say.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
// What dist/ is made of: the service's and the console's sources, and what says how they are built.
const INPUTS = ['src', 'console', 'scripts/build.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time (ms) of `entry`, a file or every file under a directory; 0 when absent. */
function newest(entry) {
  let stat;
  try {
    stat = statSync(entry);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a deleted file leaves only its directory's time
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules') continue;
    latest = Math.max(latest, newest(path.join(entry, name)));
  }
  return latest;
}

let builtAt = 0;
try {
  builtAt = statSync(path.join(root, 'dist/.build-stamp')).mtimeMs;
} catch {
  // never built, or the last build did not finish
}
const changedAt = Math.max(...INPUTS.map((input) => newest(path.join(root, input))));
if (changedAt > builtAt) {
  process.stderr.write(`${builtAt ? 'alert-webhooks: sources changed since the last build, building' : 'alert-webhooks: no build yet, building'}\n`);
  const { status } = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
