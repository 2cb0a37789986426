/** "Previous page · 21–40 of 95 · Next page" under a paged table; nothing when the list is empty. */
export function Pager({ label, offset, pageSize, total, onOffset }: { label: string; offset: number; pageSize: number; total: number; onOffset: (offset: number) => void }) {
  if (total === 0) return null;
  const last = Math.min(offset + pageSize, total);
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Previous page
      </button>
      <span>
        {offset + 1}–{last} of {total}
      </span>
      <button type="button" class="secondary" disabled={last >= total} onClick={() => onOffset(offset + pageSize)}>
        Next page
      </button>
    </nav>
  );
}
