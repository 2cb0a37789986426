import { spawn } from 'node:child_process';
import { REPO_ROOT } from './processes.js';

/** `tsx bench/<script> …args` from the repository's root, to its exit code; its stderr's tail is printed when it fails. */
export function runBenchScript(script: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${script}`, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on('exit', (exitCode) => {
      if (exitCode !== 0) console.error(stderr);
      resolve(exitCode);
    });
  });
}
