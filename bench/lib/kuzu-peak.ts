import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// In a process of its own: Kùzu opened read-only on the folder, the query run and every row read as the ceiling
// reads them (and let go), then the process's peak RSS (VmHWM) printed in MB.
const CHILD = `
import { readFileSync } from 'node:fs';
import kuzu from 'kuzu';
const [folder, memoryMb, query] = process.argv.slice(1);
const db = new kuzu.Database(folder, Number(memoryMb) * 1024 * 1024, true, true);
const conn = new kuzu.Connection(db);
const answer = await conn.query(query);
const result = Array.isArray(answer) ? answer[0] : answer;
while (result.hasNext()) result.getNextSync();
console.log(Math.round(Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024));
process.exit(0);
`;

/**
 * The peak RSS of Kùzu alone running `query` on the graph in `folder` (opened read-only, beside any other reader):
 * what the engine itself holds for an answer (it materializes a query's result before the first row is read), to
 * read the service's Kùzu process's peak beside.
 */
export function bareQueryPeakRssMb(folder: string, memoryMb: number, query: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, folder, String(memoryMb), query], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => (code === 0 && /^\d+\s*$/.test(out) ? resolve(Number(out)) : reject(new Error(`the bare query's memory probe exited with ${code}: ${out}`))));
  });
}
