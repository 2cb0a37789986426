import { RECORDED_RESPONSE_HEADERS } from '../limits.js';
import type { ResponseHeaders } from './exchange.js';

const { count: MAX_HEADERS, valueChars: MAX_VALUE_CHARS, totalChars: MAX_TOTAL_CHARS } = RECORDED_RESPONSE_HEADERS;

/**
 * Headers whose values are the receiver's credentials for its own clients, not what an operator needs to read:
 * kept by name, their value replaced. Nothing of ours is in them (the webhook's secret is never sent).
 */
const WITHHELD = new Set(['set-cookie']);
export const WITHHELD_VALUE = '(not recorded)';

export interface RecordedHeaders {
  headers: Record<string, string>;
  /** Some headers, or part of a value, were left out by the bounds. */
  truncated: boolean;
}

/**
 * A response's headers as the attempt log keeps them: names in lower case (undici's), repeated headers joined with
 * ", " (as HTTP allows), in the order received, within RECORDED_RESPONSE_HEADERS: the receiver chooses them, so a
 * receiver answering a thousand headers costs the log what one answering forty does.
 */
export function recordResponseHeaders(raw: ResponseHeaders): RecordedHeaders {
  // No prototype: a header named __proto__ is a header like any other.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  let truncated = false;
  let count = 0;
  let size = 0;
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    if (count === MAX_HEADERS) {
      truncated = true;
      break;
    }
    let text = WITHHELD.has(name) ? WITHHELD_VALUE : recordableText(Array.isArray(value) ? value.join(', ') : value);
    if (text.length > MAX_VALUE_CHARS) {
      text = `${text.slice(0, MAX_VALUE_CHARS)}…`;
      truncated = true;
    }
    const key = recordableText(name.slice(0, MAX_VALUE_CHARS));
    if (size + key.length + text.length > MAX_TOTAL_CHARS) {
      truncated = true;
      break;
    }
    headers[key] = text;
    size += key.length + text.length;
    count++;
  }
  return { headers, truncated };
}

/**
 * Text a receiver chose, as it can be stored in the attempt log: jsonb refuses the character U+0000 (a whole batch
 * of outcomes with it), so it becomes U+FFFD, the replacement character.
 */
export function recordableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}
