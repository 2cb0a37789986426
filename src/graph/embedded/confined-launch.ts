/**
 * The first moments of the embedded graph's process (confinement.ts): started by the service with its IPC channel
 * and pipes, it restricts itself with Landlock, then becomes the Kùzu process (kuzu-process.ts) by execve. The
 * restriction is in force before the first instruction of that process, on every thread it will ever start (a
 * restriction applied later, from inside Node, would miss the threads Node starts first, which Kùzu's queries
 * run on). Its one argument is the Launch, as JSON.
 */
import { execve, restrictSelf } from './landlock.js';
import type { Launch } from './confinement.js';

const launch = JSON.parse(process.argv[2]!) as Launch;
try {
  if (launch.landlockAbi > 0) restrictSelf(launch.rules, launch.landlockAbi);
  // The IPC channel (3) and the answer pipe (4) go on into the Kùzu process, as do stdin, stdout and stderr.
  execve(launch.file, launch.argv, launch.env, 4);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(70);
}
