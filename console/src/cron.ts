// Reads the common CRON forms in plain words ("every 10 seconds", "every day at 00:00"). Anything else answers
// undefined and the page shows the expression as it is: a wrong reading would be worse than none.
// No DOM here: test/console/cron.test.ts runs it in Node.

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** `*` → 1, `*\/n` → n; otherwise undefined. */
function step(field: string): number | undefined {
  if (field === '*') return 1;
  const m = /^\*\/(\d{1,2})$/.exec(field);
  return m ? Number(m[1]) : undefined;
}

function number(field: string, max: number): number | undefined {
  if (!/^\d{1,2}$/.test(field)) return undefined;
  const n = Number(field);
  return n <= max ? n : undefined;
}

const plural = (n: number, unit: string) => (n === 1 ? `every ${unit}` : `every ${n} ${unit}s`);
const two = (n: number) => String(n).padStart(2, '0');

export function describeCron(expression: string): string | undefined {
  const text = expression.trim();
  if (text === 'none') return 'never (turned off)';
  const fields = text.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return undefined;
  const [secondField, minuteField, hourField, dayField, monthField, weekdayField] = fields.length === 6 ? fields : ['0', ...fields];
  if (monthField !== '*') return undefined;
  const anyDay = dayField === '*' && weekdayField === '*';

  // Sub-minute and sub-hour repetitions.
  const secondStep = step(secondField!);
  if (secondStep !== undefined && minuteField === '*' && hourField === '*' && anyDay) return plural(secondStep, 'second');
  const second = number(secondField!, 59);
  if (second === undefined) return undefined;
  const minuteStep = step(minuteField!);
  if (minuteStep !== undefined && hourField === '*' && anyDay) return second === 0 ? plural(minuteStep, 'minute') : undefined;
  const minute = number(minuteField!, 59);
  if (minute === undefined) return undefined;
  const at = second === 0 ? `minute ${minute}` : `${two(minute)}:${two(second)} past`;
  const hourStep = step(hourField!);
  if (hourStep !== undefined && anyDay) return `${plural(hourStep, 'hour')} at ${at}`;

  // A time of day, on every day, some weekdays or one day of the month.
  const hour = number(hourField!, 23);
  if (hour === undefined) return undefined;
  const time = `${two(hour)}:${two(minute)}${second === 0 ? '' : `:${two(second)}`}`;
  if (anyDay) return `every day at ${time}`;
  if (dayField === '*') {
    if (weekdayField === '1-5') return `every weekday (Monday to Friday) at ${time}`;
    const weekday = number(weekdayField!, 7);
    return weekday === undefined ? undefined : `every ${DAYS[weekday]} at ${time}`;
  }
  const day = number(dayField!, 31);
  if (day !== undefined && day >= 1 && weekdayField === '*') return `every month on day ${day} at ${time}`;
  return undefined;
}
