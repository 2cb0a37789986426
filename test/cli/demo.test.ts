import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo.js';

// The demo brings its own embedded database whatever the project (pglite or postgres): this checks that a newcomer's
// `npm run demo` goes through, end to end, and says so.
describe('npm run demo', () => {
  it('runs end to end and reports 5 verified deliveries', async () => {
    const lines: string[] = [];
    await runDemo((line) => lines.push(line));
    const output = lines.join('\n');

    expect(output).toContain('✓ 5 deliveries received and verified.');
    expect(output.match(/signature verified ✓/g)).toHaveLength(5);
    for (const event of ['newCase', 'newMatch', 'caseStatusChange', 'ping']) expect(output).toMatch(new RegExp(`^ +${event} +webhook-id`, 'm'));
    expect(output).not.toContain('✗');
  }, 90_000); // a fresh embedded database takes seconds to create, more when the suite runs files side by side
});
