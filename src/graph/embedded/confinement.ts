/**
 * What the operating system lets the embedded graph's process reach, beneath the plan check (kuzu-plan.ts): so a
 * query that gets past the allow-list still reads no secret and writes nothing outside its graph.
 *
 * - Always: the process gets no environment of the service's (no ADMIN_PASSWORD, DATABASE_URL, SECRETS_KEY…),
 *   only what Node needs to talk to its parent, and its working directory is its graph's folder.
 * - Where the kernel offers Landlock (Linux 5.13 and later; ABI 4, Linux 6.7, adds TCP), it can read only the
 *   system's libraries, Node and the service's own code, read and write only its graph's folder (and read the
 *   files a `graph load` names), make no TCP connection, and signal no process but its own. The service's data
 *   folder (the secrets key, the embedded database, the first admin's password) and /proc of other processes are out
 *   of its reach. Detected once, at the first graph's start; logged in one line (describeConfinement).
 * - Where it does not, the process runs unconfined but for its environment, and the service says so loudly at start.
 *   GRAPH_CONFINEMENT=required makes it refuse to start an embedded graph instead (docs/security.md).
 */
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { landlockAbi, type PathRule } from './landlock.js';

export type Confinement = { kind: 'landlock'; abi: number } | { kind: 'none'; why: string };

/** What the launcher (confined-launch.ts) does: restrict itself by `rules`, then execve `file` with `argv` and `env`. */
export interface Launch {
  landlockAbi: number;
  rules: PathRule[];
  file: string;
  argv: string[];
  env: Record<string, string>;
}

let detected: Confinement | undefined;

/** What this host offers, asked once. */
export function hostConfinement(): Confinement {
  if (detected) return detected;
  if (process.env.GRAPH_CONFINEMENT?.trim() === 'off') return (detected = { kind: 'none', why: 'GRAPH_CONFINEMENT=off' });
  const abi = landlockAbi();
  detected = abi > 0 ? { kind: 'landlock', abi } : { kind: 'none', why: process.platform === 'linux' ? 'this kernel offers no Landlock (Linux 5.13 or later with the landlock LSM enabled), or a seccomp filter refuses it' : `Landlock is Linux's, and this is ${process.platform}` };
  return detected;
}

/** One line for the log: which confinement the embedded graphs' processes run under. */
export function describeConfinement(confinement: Confinement = hostConfinement()): string {
  if (confinement.kind === 'landlock') {
    const net = confinement.abi >= 4 ? ', no TCP' : '';
    const scope = confinement.abi >= 6 ? ', no signal outside' : '';
    return `embedded graphs: each Kùzu process confined by Landlock (ABI ${confinement.abi}): its graph's folder, Node and the service's code only${net}${scope}; no environment of the service's`;
  }
  return `embedded graphs: NOT confined (${confinement.why}): a Kùzu process gets no environment of the service's, but the operating system does not keep it from the service's files; the query plan check is the only guard (set GRAPH_CONFINEMENT=required to refuse to start embedded graphs here)`;
}

/** Whether embedded graphs may start on this host: not when confinement is required and there is none. */
export function confinementRefusal(confinement: Confinement = hostConfinement()): string | undefined {
  if (confinement.kind === 'none' && process.env.GRAPH_CONFINEMENT?.trim() === 'required') return `GRAPH_CONFINEMENT=required, and ${confinement.why}`;
  return undefined;
}

/** The service's compiled code (dist/, or a bench's build) or its sources (src/): the folder holding graph/. */
const CODE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The nearest package.json above the code (it says the code is ES modules), and the node_modules Kùzu came from. */
function packageFiles(): { packageJson: string | undefined; nodeModules: string } {
  let dir = CODE_ROOT;
  let packageJson: string | undefined;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) {
      packageJson = path.join(dir, 'package.json');
      break;
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const kuzu = createRequire(import.meta.url).resolve('kuzu');
  return { packageJson, nodeModules: kuzu.slice(0, kuzu.lastIndexOf(`${path.sep}node_modules${path.sep}`) + '/node_modules'.length) };
}

/**
 * Paths the Kùzu process reads: the system's libraries and Node, and of the service only its code and its
 * dependencies, never the package's folder as a whole (DATA_DIR is ./data there by default).
 */
function readRules(fromSources: boolean): PathRule[] {
  const node = realpathSync(process.execPath);
  const { packageJson, nodeModules } = packageFiles();
  const rules: PathRule[] = [
    { path: '/usr', access: 'execute' },
    { path: '/lib', access: 'execute' },
    { path: '/lib64', access: 'execute' },
    { path: '/bin', access: 'execute' },
    { path: '/etc/ld.so.cache', access: 'read' },
    // Node reads OpenSSL's configuration at start (the file only: /etc/ssl holds private keys too).
    { path: '/etc/ssl/openssl.cnf', access: 'read' },
    { path: node, access: 'execute' },
    { path: '/dev/null', access: 'write' },
    { path: '/dev/urandom', access: 'read' },
    { path: CODE_ROOT, access: 'read' },
    { path: nodeModules, access: 'execute' },
  ];
  if (packageJson) rules.push({ path: packageJson, access: 'read' });
  // tsx reads the project's tsconfig.json, beside package.json.
  if (fromSources && packageJson) rules.push({ path: path.join(path.dirname(packageJson), 'tsconfig.json'), access: 'read' });
  return rules;
}

export interface EngineProcess {
  /** The module fork() starts. */
  modulePath: string;
  args: string[];
  execArgv: string[];
  env: Record<string, string>;
  cwd: string;
}

/**
 * How to start the Kùzu process of `folder`: `entry` (kuzu-process) with `args`, directly or through the launcher,
 * with `readable` (the files a load names) readable besides the rules.
 */
export function engineProcess(folder: string, entry: string, args: string[], readable: readonly string[] = []): EngineProcess {
  const confinement = hostConfinement();
  const refusal = confinementRefusal(confinement);
  if (refusal) throw new Error(refusal);
  const fromSources = entry.endsWith('.ts');
  // Running from TypeScript sources (tests, `npm run cli`), the process loads tsx first, as this one did: by its
  // path, since the working directory is the graph's folder. A service started with --cpu-prof (the benches'
  // profiles) has its graph's process profiled too.
  const execArgv = [...(fromSources ? ['--import', import.meta.resolve('tsx')] : []), ...process.execArgv.filter((a) => a.startsWith('--cpu-prof'))];
  // HOME is Kùzu's home directory (its extensions' folder): the graph's own.
  const env: Record<string, string> = { HOME: folder, TSX_DISABLE_CACHE: '1' };
  if (confinement.kind === 'none') return { modulePath: entry, args, execArgv, env, cwd: folder };
  // A profiled process writes its profile where --cpu-prof-dir says (the current directory otherwise: its folder).
  const profiles = execArgv.flatMap((a): PathRule[] => (a.startsWith('--cpu-prof-dir=') ? [{ path: path.resolve(a.slice('--cpu-prof-dir='.length)), access: 'write' }] : []));
  const rules: PathRule[] = [...readRules(fromSources), ...readable.map((file): PathRule => ({ path: file, access: 'read' })), ...profiles, { path: folder, access: 'write' }];
  const launcher = fileURLToPath(new URL(fromSources ? './confined-launch.ts' : './confined-launch.js', import.meta.url));
  // fork() gives the launcher its IPC channel's variables; the Kùzu process gets them, and `env`, and nothing else.
  const launch: Launch = {
    landlockAbi: confinement.abi,
    rules,
    file: process.execPath,
    argv: [process.execPath, ...execArgv, entry, ...args],
    env: { ...env, NODE_CHANNEL_FD: '3', NODE_CHANNEL_SERIALIZATION_MODE: 'advanced' },
  };
  return { modulePath: launcher, args: [JSON.stringify(launch)], execArgv: fromSources ? ['--import', import.meta.resolve('tsx')] : [], env, cwd: folder };
}
