import { describe, expect, it } from 'vitest';
import { StatisticsCheck, STATISTICS_CHECK_AFTER } from '../../src/delivery/statistics-check.js';
import { createLogger } from '../../src/logger.js';

// When a drain checks the queue's statistics, alone: a fake check, no database. The real statement is in
// queue-statistics.test.ts.
function setUp(check: () => Promise<unknown> = async () => undefined) {
  const lines: string[] = [];
  let calls = 0;
  const statistics = new StatisticsCheck(
    () => {
      calls++;
      return check();
    },
    createLogger('info', { write: (line: string) => void lines.push(line) }),
  );
  return { statistics, lines, calls: () => calls };
}

describe('the queue statistics check', () => {
  it('runs once a drain has claimed a full claim, once per drain', async () => {
    const { statistics, calls } = setUp();
    const drain = statistics.forDrain();
    drain(STATISTICS_CHECK_AFTER - 1);
    expect(calls()).toBe(0);
    drain(STATISTICS_CHECK_AFTER);
    drain(STATISTICS_CHECK_AFTER * 4);
    expect(calls()).toBe(1);
    await statistics.running;
    statistics.forDrain()(STATISTICS_CHECK_AFTER);
    expect(calls()).toBe(2);
  });

  it('runs one check at a time: a drain that comes while one runs leaves it be', async () => {
    let finish = () => {};
    const { statistics, calls } = setUp(() => new Promise<void>((resolve) => (finish = resolve)));
    statistics.forDrain()(STATISTICS_CHECK_AFTER);
    statistics.forDrain()(STATISTICS_CHECK_AFTER);
    expect(calls()).toBe(1);
    expect(statistics.running).toBeDefined();
    finish();
    await statistics.running;
    expect(statistics.running).toBeUndefined();
  });

  it('warns when the check fails, and never throws at the drain', async () => {
    const { statistics, lines } = setUp(async () => {
      throw new Error('connection refused');
    });
    statistics.forDrain()(STATISTICS_CHECK_AFTER);
    await statistics.running;
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['could not check the delivery queue statistics']);
  });
});
