import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo.js';

// The demo brings its own embedded database whatever the project (pglite or postgres): this checks that a newcomer's
// `npm run demo` goes through, end to end, and says so.
describe('npm run demo', () => {
  it('builds a fraud graph, runs a Cypher alert and reports 9 verified deliveries, a rerun adding nothing', async () => {
    const lines: string[] = [];
    await runDemo((line) => lines.push(line));
    const output = lines.join('\n');

    expect(output).toContain('✓ 9 deliveries received and verified.');
    expect(output.match(/signature verified ✓/g)).toHaveLength(9);
    expect(output).toContain('4 new matches, 0 seen before, 2 cases opened, 4 events');
    expect(output).toContain('0 new matches, 4 seen before, 0 cases opened, 0 events');
    expect(output).toContain('3 new matches, 4 seen before, 0 cases opened, 3 events');
    for (const event of ['newCase', 'newMatch', 'caseStatusChange', 'ping']) expect(output).toMatch(new RegExp(`^ +${event} +webhook-id`, 'm'));
    expect(output).not.toContain('✗');
  }, 180_000); // a fresh embedded database and graph take seconds to create, more when the suite runs files side by side
});
