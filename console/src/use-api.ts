import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get } from './api';

/**
 * The one way a page loads data: what it got, what went wrong, whether a load is under way, and a way to load again.
 * An answer that arrives after a newer load started (the user paged on, the path changed, the page went away) is
 * dropped, so a slow answer never overwrites a newer one.
 */
export interface Loaded<T> {
  /** The last answer, kept while a reload runs (no flicker on refresh or paging); undefined until the first one. */
  data: T | undefined;
  /** The error of the last load; cleared by the next answer. */
  error: Error | undefined;
  loading: boolean;
  /** Loads again (after a change the page made, or on the user's request). */
  reload: () => void;
  /** Replaces the data with what a change answered, without asking again. */
  setData: (data: T) => void;
}

export interface LoadOptions {
  /** Loads again every so many milliseconds while the page is open (never two loads at once). */
  refreshMs?: number | undefined;
}

/**
 * Runs `load` now and whenever one of `deps` changes (as useEffect does); `load` undefined waits (nothing to ask yet).
 * For a page that needs more than one call, or a call whose answer decides the next.
 */
export function useLoad<T>(load: ((signal: AbortSignal) => Promise<T>) | undefined, deps: readonly unknown[], options: LoadOptions = {}): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: Error | undefined; loading: boolean }>({ data: undefined, error: undefined, loading: load !== undefined });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const inFlight = useRef(false);

  useEffect(() => {
    if (!load) return;
    const ticket = ++latest.current;
    const controller = new AbortController();
    inFlight.current = true;
    setState((s) => (s.loading ? s : { ...s, loading: true }));
    load(controller.signal).then(
      (data) => ticket === latest.current && setState({ data, error: undefined, loading: false }),
      (err: unknown) => ticket === latest.current && setState((s) => ({ data: s.data, error: err instanceof Error ? err : new Error(String(err)), loading: false })),
    ).finally(() => {
      if (ticket === latest.current) inFlight.current = false;
    });
    return () => {
      // Deps changed or the page went away: this load's answer, if it still comes, is for no one.
      if (ticket === latest.current) latest.current++;
      controller.abort();
    };
  }, [...deps, generation, load === undefined]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const refreshMs = options.refreshMs;
  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => inFlight.current || reload(), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs, reload]);

  const setData = useCallback((data: T) => {
    latest.current++; // an older load still running must not overwrite what the change answered
    inFlight.current = false;
    setState({ data, error: undefined, loading: false });
  }, []);
  return { ...state, reload, setData };
}

/** GET `path` (null: not yet) as `T`, again when the path changes. */
export function useApi<T>(path: string | null, options: LoadOptions = {}): Loaded<T> {
  return useLoad<T>(path === null ? undefined : (signal) => get<T>(path, signal), [path], options);
}
