import { useId } from 'preact/hooks';
import { pageSizes } from './list-query.js';

/** Previous and next page, where the page is ("21–40 of 57") and how many rows a page holds. */
export function Pager({
  name,
  offset,
  limit,
  shown,
  total,
  hasNext,
  onPage,
}: {
  name: string;
  offset: number;
  limit: number;
  shown: number;
  total: number;
  hasNext: boolean;
  onPage: (offset: number, limit: number) => void;
}) {
  const id = useId();
  return (
    <nav class="pager" aria-label={`${name} pages`}>
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => onPage(Math.max(0, offset - limit), limit)}
      >
        Previous
      </button>
      <span aria-live="polite">
        {shown === 0 ? `0 of ${total}` : `${offset + 1}–${offset + shown} of ${total}`}
      </span>
      <button type="button" disabled={!hasNext} onClick={() => onPage(offset + limit, limit)}>
        Next
      </button>
      <label for={id}>Rows per page</label>
      <select
        id={id}
        value={String(limit)}
        onChange={(event) => onPage(0, Number((event.target as HTMLSelectElement).value))}
      >
        {[...new Set([...pageSizes, limit])]
          .sort((a, b) => a - b)
          .map((size) => (
            <option key={size} value={String(size)}>
              {size}
            </option>
          ))}
      </select>
    </nav>
  );
}
