import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { type Book, BookForm, draftOf, emptyDraft } from './book-form.js';
import { Failure, Scroll } from './shared.js';

interface Page {
  items: Book[];
  total: number;
  limit: number;
  offset: number;
}
type Notice = { kind: 'status' | 'alert'; text: string };
const limit = 10;

/** Search, page through, create, edit and delete books. */
export function BooksPage() {
  const [query, setQuery] = useState('');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<Page>();
  const [error, setError] = useState<Error>();
  const [editing, setEditing] = useState<string>();
  const [notice, setNotice] = useState<Notice>();
  // Writes bump this to reload with the query as it is then (never a stale one).
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((value) => value + 1);
  // Only the answer to the latest request is shown: answers can arrive out of order while typing.
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    const search = new URLSearchParams({ limit: String(limit), offset: String(offset) });
    if (query.trim()) search.set('q', query.trim());
    api<Page>(`/books?${search}`).then(
      (result) => {
        if (ticket !== latest.current) return;
        // The last book of the last page was deleted: show the page before.
        if (result.items.length === 0 && offset > 0) return setOffset(Math.max(0, offset - limit));
        setPage(result);
        setError(undefined);
      },
      (failure: Error) => ticket === latest.current && setError(failure),
    );
  }, [query, offset, version]);

  const remove = async (book: Book) => {
    if (!confirm(`Delete "${book.title}"?`)) return;
    setNotice(undefined);
    try {
      await api(`/books/${encodeURIComponent(book.id)}`, { method: 'DELETE' });
      setNotice({ kind: 'status', text: `Deleted “${book.title}”.` });
    } catch (failure) {
      const problem = failure instanceof ApiError ? failure.problem : undefined;
      setNotice({ kind: 'alert', text: problem ? `${problem.title}: ${problem.detail}` : String(failure) });
    }
    reload();
  };

  return (
    <section>
      <h2>Books</h2>
      <div class="toolbar">
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
        <p role="status" class="notice">
          {notice?.kind === 'status' ? notice.text : ''}
        </p>
      </div>
      {notice?.kind === 'alert' && (
        <p role="alert" class="error">
          {notice.text}
        </p>
      )}
      {error && <Failure error={error} />}
      {page && (
        <>
          <Scroll>
            <table class="books">
              <thead>
                <tr>
                  <th>Title</th>
                  <th>Author</th>
                  <th>Year</th>
                  <th>ISBN</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((book) =>
                  editing === book.id ? (
                    <tr key={book.id}>
                      <td colSpan={5}>
                        <BookForm
                          label={`Edit ${book.title}`}
                          initial={draftOf(book)}
                          onCancel={() => setEditing(undefined)}
                          onSave={async (fields) => {
                            setNotice(undefined);
                            await api(`/books/${encodeURIComponent(book.id)}`, {
                              method: 'PATCH',
                              json: fields,
                            });
                            setEditing(undefined);
                            setNotice({ kind: 'status', text: `Saved “${fields.title}”.` });
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
                          onClick={() => void remove(book)}
                        >
                          Delete
                        </button>
                      </td>
                    </tr>
                  ),
                )}
              </tbody>
            </table>
          </Scroll>
          <nav class="pager" aria-label="Book pages">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - limit))}
            >
              Previous
            </button>
            <span>
              {page.total === 0
                ? query.trim()
                  ? 'No books match'
                  : 'No books'
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
        label="Add a book"
        initial={emptyDraft}
        onSave={async (fields) => {
          setNotice(undefined);
          await api('/books', { method: 'POST', json: fields });
          setNotice({ kind: 'status', text: `Added “${fields.title}”.` });
          reload();
        }}
      />
    </section>
  );
}
