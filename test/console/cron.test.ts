import { describe, expect, it } from 'vitest';
import { describeCron } from '../../console/src/cron.js';

// The settings page's plain-words reading of a CRON (issue 13, item 4): the common forms read, the rest left as is.
describe('describeCron', () => {
  it.each([
    ['* * * * *', 'every minute'],
    ['*/5 * * * *', 'every 5 minutes'],
    ['* * * * * *', 'every second'],
    ['*/10 * * * * *', 'every 10 seconds'],
    ['0 */2 * * * *', 'every 2 minutes'],
    ['15 * * * *', 'every hour at minute 15'],
    ['0 */6 * * *', 'every 6 hours at minute 0'],
    ['0 0 * * *', 'every day at 00:00'],
    ['30 2 * * *', 'every day at 02:30'],
    ['5 30 2 * * *', 'every day at 02:30:05'],
    ['0 9 * * 1', 'every Monday at 09:00'],
    ['0 9 * * 1-5', 'every weekday (Monday to Friday) at 09:00'],
    ['0 3 1 * *', 'every month on day 1 at 03:00'],
    ['none', 'never (turned off)'],
  ])('reads %s as "%s"', (expression, words) => {
    expect(describeCron(expression)).toBe(words);
  });

  it.each(['0 0 * 1 *', '1,2 * * * *', '0 9 * * MON', '0 25 * * *', '5 * * * * *', 'every tuesday', '', '* * * *', '0 0 1 * 1'])(
    'leaves %j to be shown as written',
    (expression) => {
      expect(describeCron(expression)).toBeUndefined();
    },
  );
});
