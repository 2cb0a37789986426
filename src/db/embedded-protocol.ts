/** Messages between the service and the embedded database's thread (see embedded-thread.ts). */

export interface OpenRequest {
  /** PGlite's directory. */
  pgdata: string;
}

/**
 * A statement the database keeps prepared under `name` on each session that has run it (see namedStatement in
 * database.ts). Here, beside the messages, because the thread is handed one too.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/** A statement for the thread: `name` set for a named statement (the text comes too: pg parses it once per session). */
export type ThreadRequest = { id: number; text: string; name: string | undefined; params: readonly unknown[] | undefined } | { id: number; close: true };

export interface StatementResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
  command: string;
}

/** A database error's fields (code, constraint, detail, …), as plain data: an Error's class does not cross threads. */
export type ErrorFields = { message: string } & Record<string, unknown>;

export type ThreadReply =
  | { ready: true }
  | { openFailed: ErrorFields }
  | { id: number; result: StatementResult }
  | { id: number; error: ErrorFields }
  | { id: number; closed: true };

export function errorFields(err: unknown): ErrorFields {
  if (!(err instanceof Error)) {
    // PGlite's file system throws Emscripten's ErrnoError, a plain object: { name: 'ErrnoError', errno: 54 }.
    const { name, errno, message } = (err ?? {}) as { name?: unknown; errno?: unknown; message?: unknown };
    if (typeof message === 'string') return { message };
    if (typeof name === 'string') return { message: typeof errno === 'number' ? `${name} (errno ${errno})` : name };
    return { message: String(err) };
  }
  const fields: ErrorFields = { message: err.message };
  for (const [key, value] of Object.entries(err)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'object') continue;
    fields[key] = value;
  }
  return fields;
}

export function errorFrom(fields: ErrorFields): Error {
  const { message, ...rest } = fields;
  return Object.assign(new Error(message), rest);
}
