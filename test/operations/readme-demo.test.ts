import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.js';

// The README's Demo section, as a newcomer reads it: its shell block run by bash, as written, from the repository,
// and what the paragraph says the demo does checked against what it printed: every output it quotes, the number of
// deliveries, each event type it names. (The README described the demo before graphs for a while: 5 deliveries of
// reported matches, where it had built a graph, run an alert and sent 9.) The demo brings its own embedded database
// whatever the project, so it runs once, in the pglite project.

/** The README's Demo section: from its heading to the next section. */
function demoSection(): string {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n### Demo');
  expect(start, 'README.md has a Demo section').toBeGreaterThan(0);
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

describe('the README demo', () => {
  it('does what the README says, run as written', async () => {
    const section = demoSection();
    const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toEqual(['npm run demo\n']);
    const prose = section.replace(/```sh\n[\s\S]*?```/g, '');

    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', blocks[0]!], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, output).toBe(0);

    // Every line of output the paragraph quotes (a run's counts, the verdict) is printed, as quoted.
    const quoted = [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
    const outputs = quoted.filter((q) => / new matches, /.test(q) || q.startsWith('✓'));
    expect(outputs.length, 'the paragraph quotes the runs and the verdict').toBeGreaterThanOrEqual(4);
    for (const line of outputs) expect(output, line).toContain(line);
    // "each of the N deliveries": N deliveries, each verified.
    const deliveries = Number(/each of the (\d+) deliveries/.exec(prose.replace(/\s+/g, ' '))?.[1]);
    expect(output.match(/signature verified ✓/g)?.length, output).toBe(deliveries);
    // Each event type it names was delivered.
    const events = [...new Set(quoted.filter((q) => ['newCase', 'newMatch', 'caseStatusChange', 'ping', 'webhookDisabled'].includes(q)))];
    expect(events.sort()).toEqual(['caseStatusChange', 'newCase', 'newMatch', 'ping']);
    for (const event of events) expect(output).toMatch(new RegExp(`^ +${event} +webhook-id`, 'm'));
    expect(output).not.toContain('✗');
  }, 180_000); // a fresh embedded database and graph take seconds to create, more when the suite runs files side by side
});
