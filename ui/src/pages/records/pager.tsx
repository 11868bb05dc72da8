import { useId } from 'preact/hooks';
import { pageSizes } from './list-query.js';

/** The deepest offset the server answers (deeper pages are reached by cursor). */
const maxOffset = 10_000;

/** Previous and next page, where the page is ("21–40 of 57") and how many rows a page holds. */
export function Pager({
  name,
  offset,
  limit,
  shown,
  total,
  totalExact,
  hasNext,
  onPage,
}: {
  name: string;
  offset: number;
  limit: number;
  shown: number;
  total: number;
  totalExact: boolean;
  hasNext: boolean;
  onPage: (offset: number, limit: number) => void;
}) {
  const id = useId();
  const of = totalExact ? total.toLocaleString('en') : `${total.toLocaleString('en')}+`;
  // The server pages by offset up to 10,000 records in.
  const beyond = offset + limit > maxOffset;
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
        {shown === 0 ? `0 of ${of}` : `${offset + 1}–${offset + shown} of ${of}`}
      </span>
      <button
        type="button"
        disabled={!hasNext || beyond}
        title={beyond ? `Pages past record ${maxOffset} are reached by filtering or sorting` : undefined}
        onClick={() => onPage(offset + limit, limit)}
      >
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
