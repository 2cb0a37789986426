// Every call the console makes goes through here: same origin, the session cookie, JSON both ways, and the API's
// `{key, message, field?}` errors kept whole so a form can show the message next to the field it is about.
import type { ErrorAnswer } from '../../src/http/schemas';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly key: string,
    message: string,
    /** The field the error is about, as the API names it (`url`, `events[0].sourceKey`, `webhooks.requestTimeoutMs`). */
    readonly field?: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const signedOutListeners = new Set<Listener>();

/** Called when a call answers 401: the session ended (expired, or signed out in another tab). */
export function onSignedOut(listener: Listener): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      ...(signal ? { signal } : {}),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, 'network', 'the service did not answer: is it running?');
  }
  const text = await response.text();
  const parsed: unknown = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const error = parsed as Partial<ErrorAnswer> | undefined;
    if (response.status === 401 && path !== '/api/auth/login' && path !== '/api/auth/me') for (const l of signedOutListeners) l();
    throw new ApiError(response.status, error?.key ?? 'http_error', error?.message ?? `the service answered ${response.status}`, error?.field);
  }
  return parsed as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => api<T>('GET', path, undefined, signal);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body);
export const put = <T>(path: string, body: unknown) => api<T>('PUT', path, body);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = (path: string) => api<void>('DELETE', path);

/** The message of anything thrown, for showing. */
export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Which of a form's `fields` an API error is about, from its `field`: the form's own name for it (`events[0].sourceKey`
 * is the form's `events`; `webhooks.retryScheduleMs[1]`, the settings form's `retryScheduleMs`).
 */
export function fieldOf<F extends string>(err: unknown, fields: readonly F[]): F | undefined {
  if (!(err instanceof ApiError) || err.field === undefined) return undefined;
  const [first, second] = err.field.split(/[.[]/);
  const named = first === 'webhooks' && second !== undefined ? second : first;
  return fields.find((f) => f === named);
}
