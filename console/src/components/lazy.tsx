import type { ComponentType } from 'preact';
import { useLoad } from '../use-api';
import { Notice } from './notice';

/**
 * A component whose code is fetched when it is first shown: the query editor and the graph drawing are larger than
 * the rest of the console together, and most visits need neither.
 */
export function lazyComponent<P extends object>(load: () => Promise<ComponentType<P>>, what: string): ComponentType<P> {
  let loading: Promise<ComponentType<P>> | undefined;
  return function Lazy(props: P) {
    const { data: Component, error } = useLoad(() => (loading ??= load()), []);
    if (error) return <Notice kind="error">The {what} could not be loaded: {error.message}</Notice>;
    if (!Component) return <p class="loading">Loading the {what}…</p>;
    return <Component {...props} />;
  };
}
