import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Failure } from './shared.js';

interface Book {
  id: string;
  title: string;
  author: string;
  year: number | null;
  isbn: string | null;
}
interface Page {
  items: Book[];
  total: number;
  limit: number;
  offset: number;
}
type Draft = { title: string; author: string; year: string; isbn: string };
const empty: Draft = { title: '', author: '', year: '', isbn: '' };
const limit = 10;

function BookForm({
  initial,
  onSave,
  onCancel,
}: {
  initial: Draft;
  onSave: (draft: Draft) => Promise<void>;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const field = (name: keyof Draft, label: string, numeric = false) => (
    <label>
      {label}
      <input
        name={name}
        inputMode={numeric ? 'numeric' : 'text'}
        value={draft[name]}
        aria-invalid={errors[name] ? 'true' : undefined}
        onInput={(event) => setDraft({ ...draft, [name]: (event.target as HTMLInputElement).value })}
      />
      {errors[name] && <span class="field-error">{errors[name]}</span>}
    </label>
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setMessage('');
    try {
      await onSave(draft);
      setDraft(initial);
    } catch (error) {
      if (error instanceof ApiError && error.problem.errors) {
        setErrors(
          Object.fromEntries(error.problem.errors.map((e) => [e.path.replace(/^body\./, ''), e.message])),
        );
      }
      setMessage(
        error instanceof ApiError ? `${error.problem.title}: ${error.problem.detail}` : String(error),
      );
    }
  };
  return (
    <form class="book-form" onSubmit={submit}>
      {field('title', 'Title')}
      {field('author', 'Author')}
      {field('year', 'Year', true)}
      {field('isbn', 'ISBN')}
      <button type="submit">Save</button>
      {onCancel && (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      )}
      {message && (
        <p role="alert" class="error">
          {message}
        </p>
      )}
    </form>
  );
}

const toBody = (draft: Draft) => ({
  title: draft.title,
  author: draft.author,
  year: draft.year === '' ? null : Number(draft.year),
  isbn: draft.isbn === '' ? null : draft.isbn,
});

/** Search, page through, create, edit and delete books. */
export function BooksPage() {
  const [query, setQuery] = useState('');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page>();
  const [error, setError] = useState<Error>();
  const [editing, setEditing] = useState<string>();
  const latest = useRef(0);
  // Only the answer to the latest request is shown: answers can arrive out of order while typing.
  const load = async () => {
    const ticket = ++latest.current;
    try {
      const result = await api<Page>(
        `/books?limit=${limit}&offset=${offset}${query ? `&q=${encodeURIComponent(query)}` : ''}`,
      );
      if (ticket !== latest.current) return;
      setPage(result);
      setError(undefined);
    } catch (failure) {
      if (ticket === latest.current) setError(failure as Error);
    }
  };
  // Writes bump this to reload with the query as it is then (never a stale one).
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((value) => value + 1);
  useEffect(() => {
    void load();
  }, [query, offset, version]);

  return (
    <section>
      <h2>Books</h2>
      <input
        type="search"
        placeholder="Search title or author"
        aria-label="Search books"
        value={query}
        onInput={(event) => {
          setOffset(0);
          setQuery((event.target as HTMLInputElement).value);
        }}
      />
      {error && <Failure error={error} />}
      {page && (
        <>
          <table class="books">
            <thead>
              <tr>
                <th>Title</th>
                <th>Author</th>
                <th>Year</th>
                <th>ISBN</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {page.items.map((book) =>
                editing === book.id ? (
                  <tr key={book.id}>
                    <td colSpan={5}>
                      <BookForm
                        initial={{
                          title: book.title,
                          author: book.author,
                          year: book.year?.toString() ?? '',
                          isbn: book.isbn ?? '',
                        }}
                        onCancel={() => setEditing(undefined)}
                        onSave={async (draft) => {
                          await api(`/books/${book.id}`, { method: 'PATCH', json: toBody(draft) });
                          setEditing(undefined);
                          reload();
                        }}
                      />
                    </td>
                  </tr>
                ) : (
                  <tr key={book.id}>
                    <td>{book.title}</td>
                    <td>{book.author}</td>
                    <td>{book.year ?? ''}</td>
                    <td>{book.isbn ?? ''}</td>
                    <td class="actions">
                      <button
                        type="button"
                        onClick={() => setEditing(book.id)}
                        aria-label={`Edit ${book.title}`}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Delete ${book.title}`}
                        onClick={async () => {
                          if (!confirm(`Delete "${book.title}"?`)) return;
                          await api(`/books/${book.id}`, { method: 'DELETE' }).catch(setError);
                          reload();
                        }}
                      >
                        Delete
                      </button>
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
          <nav class="pager" aria-label="Pages">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - limit))}
            >
              Previous
            </button>
            <span>
              {page.total === 0
                ? 'No books'
                : `${offset + 1}–${Math.min(offset + limit, page.total)} of ${page.total}`}
            </span>
            <button
              type="button"
              disabled={offset + limit >= page.total}
              onClick={() => setOffset(offset + limit)}
            >
              Next
            </button>
          </nav>
        </>
      )}
      <h3>Add a book</h3>
      <BookForm
        initial={empty}
        onSave={async (draft) => {
          await api('/books', { method: 'POST', json: toBody(draft) });
          reload();
        }}
      />
    </section>
  );
}
