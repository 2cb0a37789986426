import { navigate } from '../router';

/** The same page's address with another cursor (null: the first page); the filters kept. */
export function withCursor(path: string, query: URLSearchParams, cursor: string | null): string {
  const next = new URLSearchParams(query);
  if (cursor === null) next.delete('cursor');
  else next.set('cursor', cursor);
  return next.size > 0 ? `${path}?${next}` : path;
}

/**
 * "First page · Next page" under a list paged by cursor: the cursor is in the URL, so a page is a link and the
 * browser's Back returns to the one before.
 */
export function CursorPager({ label, path, query, nextCursor }: { label: string; path: string; query: URLSearchParams; nextCursor: string | null | undefined }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={!query.has('cursor')} onClick={() => navigate(withCursor(path, query, null))}>
        First page
      </button>
      <button type="button" class="secondary" disabled={!nextCursor} onClick={() => nextCursor && navigate(withCursor(path, query, nextCursor))}>
        Next page
      </button>
    </nav>
  );
}
