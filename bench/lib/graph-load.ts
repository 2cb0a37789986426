import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `node <cli> graph load <source> …` with the service stopped, as an operator runs it; answers what it printed. */
export function graphLoad(cli: string, env: Record<string, string>, source: string, files: { accounts: string; transfers: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'graph', 'load', source, '--nodes', `Account=${files.accounts}`, '--edges', `TRANSFER=${files.transfers}`], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`graph load exited with ${code}: ${out}`))));
  });
}

/** The service's Kùzu process: its one child (Linux /proc). */
export function kuzuChildPid(servicePid: number): number {
  const children = readFileSync(`/proc/${servicePid}/task/${servicePid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  if (children.length !== 1) throw new Error(`expected the service to have one child (its Kùzu process), found ${children.length}`);
  return children[0]!;
}
