// Every call the console makes goes through here: same origin, the session cookie, JSON both ways, and the API's
// `{key, message}` errors kept whole so a form can show the message next to the field it names.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly key: string,
    message: string,
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

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, 'network', 'the service did not answer: is it running?');
  }
  const text = await response.text();
  const parsed: unknown = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const error = parsed as { key?: string; message?: string } | undefined;
    if (response.status === 401 && path !== '/api/auth/login' && path !== '/api/auth/me') for (const l of signedOutListeners) l();
    throw new ApiError(response.status, error?.key ?? 'http_error', error?.message ?? `the service answered ${response.status}`);
  }
  return parsed as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = (path: string) => api<void>('DELETE', path);

/** The message of anything thrown, for showing. */
export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Which of `fields` the API's message names: messages start with the field (`url "x" is not an absolute URL`,
 * `field secret must be …`, `webhooks.deliveryFrequency "x" is not …`, `webhooks.retryScheduleMs[1] must …`).
 */
export function fieldOf<F extends string>(message: string, fields: readonly F[]): F | undefined {
  const named = /^(?:field\s+)?(?:body[./])?(?:webhooks\.)?([A-Za-z]+)/.exec(message)?.[1];
  return fields.find((f) => f === named);
}
