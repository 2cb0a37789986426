// Runs the Dockerfile's steps without Docker, for a machine that has no container engine (or cannot pull the base
// image): copies the repository's files as a build context would see them (tracked and untracked but not ignored:
// no node_modules, no dist, no data) into a clean folder, then runs each stage's WORKDIR, COPY, ENV and RUN there,
// each stage in a folder of its own standing for its root file system. The base image's own content (Node, npm) is
// this machine's. It prints, as its last line, the image the last stage describes: its folder, working directory,
// environment, ENTRYPOINT, CMD, USER, HEALTHCHECK, ... so a test can start it as a container would.
//
//   node scripts/image-steps.mjs --out /tmp/image [--dockerfile Dockerfile]
//
// What it cannot do: switch user (USER is recorded, `chown` in RUN is a no-op: ownership is the image's) or
// confine a RUN to its stage (steps must use paths relative to WORKDIR, as the Dockerfile does).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1] : fallback;
};
const out = option('--out');
if (!out) throw new Error('usage: node scripts/image-steps.mjs --out DIR [--dockerfile Dockerfile]');
const dockerfile = path.resolve(root, option('--dockerfile', 'Dockerfile'));
const log = (line) => process.stderr.write(`${line}\n`);

/** The build context: the files git would give a fresh clone, plus untracked ones not ignored. */
function cleanCopy(into) {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const ignored = readDockerignore();
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(path.join(root, file)) || ignored(file)) continue; // deleted in the working tree, or left out
    mkdirSync(path.dirname(path.join(into, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(into, file));
  }
}

/** .dockerignore's entries, as plain path prefixes and `*.ext` patterns (all ours uses). */
function readDockerignore() {
  const file = path.join(root, '.dockerignore');
  const entries = existsSync(file)
    ? readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    : [];
  return (relative) =>
    entries.some((entry) => (entry.startsWith('*.') ? relative.endsWith(entry.slice(1)) : relative === entry || relative.startsWith(`${entry}/`)));
}

/** The Dockerfile's instructions: continuation lines joined, comments dropped. */
function instructions(text) {
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  return lines
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const space = line.search(/\s/);
      return { op: line.slice(0, space).toUpperCase(), rest: line.slice(space + 1).trim() };
    });
}

/** `["a", "b"]` (exec form) or `a b` (shell form, run by sh -c). */
function commandOf(rest) {
  return rest.startsWith('[') ? JSON.parse(rest) : ['/bin/sh', '-c', rest];
}

/** `K=V K2="V 2"` or the old `K V`. */
function pairsOf(rest) {
  if (!rest.includes('=')) {
    const space = rest.search(/\s/);
    return [[rest.slice(0, space), rest.slice(space + 1).trim()]];
  }
  return [...rest.matchAll(/(\w+)=("([^"]*)"|\S*)/g)].map((m) => [m[1], m[3] ?? m[2]]);
}

const expand = (text, vars) => text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a, b) => vars[a ?? b] ?? '');

rmSync(out, { recursive: true, force: true });
const context = path.join(out, 'context');
mkdirSync(context, { recursive: true });
cleanCopy(context);
log(`context: ${context}`);

const args = {};
const stages = new Map();
let stage;
for (const { op, rest } of instructions(readFileSync(dockerfile, 'utf8'))) {
  if (op === 'ARG') {
    const [name, value = ''] = rest.split('=');
    args[name] ??= value;
    continue;
  }
  if (op === 'FROM') {
    const [, base, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(expand(rest, args)) ?? [];
    stage = { name: name ?? String(stages.size), base, dir: path.join(out, 'stages', name ?? String(stages.size)), workdir: '/', env: {}, config: {} };
    mkdirSync(stage.dir, { recursive: true });
    stages.set(stage.name, stage);
    log(`FROM ${base} AS ${stage.name}`);
    continue;
  }
  if (!stage) throw new Error(`${op} before FROM`);
  const inStage = (p) => path.join(stage.dir, path.posix.resolve(stage.workdir, p));
  log(`${op} ${rest}`);
  switch (op) {
    case 'WORKDIR':
      stage.workdir = path.posix.resolve(stage.workdir, expand(rest, stage.env));
      mkdirSync(inStage('.'), { recursive: true });
      break;
    case 'ENV':
      for (const [key, value] of pairsOf(rest)) stage.env[key] = expand(value, stage.env);
      break;
    case 'COPY': {
      const words = rest.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const [dest, ...sources] = words.filter((w) => !w.startsWith('--')).reverse();
      const source = from ? (p) => path.join(stages.get(from).dir, path.posix.resolve('/', p)) : (p) => path.join(context, p);
      const target = inStage(dest);
      for (const src of sources.reverse()) {
        const origin = source(src);
        const isDir = statSync(origin).isDirectory();
        // A directory's content goes into the destination; a file into it when it ends with a slash.
        const to = isDir || !dest.endsWith('/') ? target : path.join(target, path.basename(origin));
        mkdirSync(isDir ? to : path.dirname(to), { recursive: true });
        cpSync(origin, to, { recursive: true });
      }
      break;
    }
    case 'RUN': {
      const ran = spawnSync('bash', ['-ec', `chown() { :; }\n${rest}`], { cwd: inStage('.'), env: { ...process.env, ...stage.env }, stdio: ['ignore', 2, 2] });
      if (ran.status !== 0) throw new Error(`RUN ${rest} failed with exit code ${ran.status}`);
      break;
    }
    case 'ENTRYPOINT':
    case 'CMD':
      stage.config[op.toLowerCase()] = commandOf(rest);
      break;
    case 'USER':
    case 'STOPSIGNAL':
      stage.config[op.toLowerCase()] = rest;
      break;
    case 'EXPOSE':
      stage.config.expose = rest.split(/\s+/).map(Number);
      break;
    case 'VOLUME':
      stage.config.volumes = rest.startsWith('[') ? JSON.parse(rest) : rest.split(/\s+/);
      break;
    case 'HEALTHCHECK':
      stage.config.healthcheck = commandOf(rest.slice(rest.indexOf('CMD') + 3).trim());
      break;
    case 'LABEL':
      break;
    default:
      throw new Error(`image-steps.mjs does not know ${op}`);
  }
}

const image = [...stages.values()].at(-1);
process.stdout.write(`${JSON.stringify({ dir: image.dir, workdir: path.join(image.dir, image.workdir), env: image.env, ...image.config })}\n`);
