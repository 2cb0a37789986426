import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * A generated transfer graph for the graph bench: `accounts` Account nodes (id INT64, name) and `edges` TRANSFER
 * edges between them (amount DOUBLE, day INT64), in the CSV form `alert-webhooks graph load` reads. The same seed
 * gives the same graph, so runs compare.
 */
export interface GeneratedGraph {
  accountsFile: string;
  transfersFile: string;
  accounts: number;
  edges: number;
}

// A small linear congruential generator: deterministic and fast enough for millions of rows.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

async function writeLines(file: string, header: string, count: number, line: (i: number) => string): Promise<void> {
  const out = createWriteStream(file);
  out.write(`${header}\n`);
  const CHUNK = 10_000;
  for (let start = 0; start < count; start += CHUNK) {
    let text = '';
    for (let i = start; i < Math.min(count, start + CHUNK); i++) text += `${line(i)}\n`;
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

export async function generateGraph(dir: string, accounts: number, edges: number): Promise<GeneratedGraph> {
  const next = random(25);
  const accountsFile = `${dir}/accounts.csv`;
  const transfersFile = `${dir}/transfers.csv`;
  await writeLines(accountsFile, 'id:INT64,name', accounts, (i) => `${i},account-${i}`);
  await writeLines(transfersFile, 'from:Account,to:Account,amount:DOUBLE,day:INT64', edges, () => {
    const from = Math.floor(next() * accounts);
    const to = Math.floor(next() * accounts);
    return `${from},${to},${(next() * 1000).toFixed(2)},${Math.floor(next() * 365)}`;
  });
  return { accountsFile, transfersFile, accounts, edges };
}
