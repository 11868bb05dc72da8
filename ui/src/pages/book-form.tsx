import { useId, useState } from 'preact/hooks';
import { ApiError } from '../api.js';

export interface Book {
  id: string;
  title: string;
  author: string;
  year: number | null;
  isbn: string | null;
}
export type Draft = { title: string; author: string; year: string; isbn: string };
export const emptyDraft: Draft = { title: '', author: '', year: '', isbn: '' };
export type BookFields = Pick<Book, 'title' | 'author' | 'year' | 'isbn'>;

export const draftOf = (book: Book): Draft => ({
  title: book.title,
  author: book.author,
  year: book.year?.toString() ?? '',
  isbn: book.isbn ?? '',
});

/** The body to send, or the field errors that the form itself can tell (a year must be a whole number). */
function fieldsOf(draft: Draft): BookFields | { errors: Record<string, string> } {
  const year = draft.year.trim();
  if (year && !/^-?\d+$/.test(year)) return { errors: { year: 'year must be a whole number, like 1974' } };
  return {
    title: draft.title,
    author: draft.author,
    year: year ? Number(year) : null,
    isbn: draft.isbn.trim() || null,
  };
}

/** A book's fields; the server's 422 field errors show next to their fields, other errors below. */
export function BookForm({
  initial,
  label,
  onSave,
  onCancel,
}: {
  initial: Draft;
  label: string;
  onSave: (fields: BookFields) => Promise<void>;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const id = useId();
  const field = (name: keyof Draft, text: string, numeric = false) => (
    <label>
      {text}
      <input
        name={name}
        inputMode={numeric ? 'numeric' : 'text'}
        value={draft[name]}
        aria-invalid={errors[name] ? 'true' : undefined}
        aria-describedby={errors[name] ? `${id}-${name}-error` : undefined}
        onInput={(event) => setDraft({ ...draft, [name]: (event.target as HTMLInputElement).value })}
      />
      {errors[name] && (
        <span class="field-error" id={`${id}-${name}-error`}>
          {errors[name]}
        </span>
      )}
    </label>
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setMessage('');
    const fields = fieldsOf(draft);
    if ('errors' in fields) return setErrors(fields.errors);
    setBusy(true);
    try {
      await onSave(fields);
      setDraft(initial);
    } catch (error) {
      const problem = error instanceof ApiError ? error.problem : undefined;
      if (problem?.errors) {
        setErrors(Object.fromEntries(problem.errors.map((e) => [e.path.replace(/^body\.?/, ''), e.message])));
      }
      setMessage(problem ? `${problem.title}: ${problem.detail}` : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="book-form" aria-label={label} onSubmit={submit}>
      {field('title', 'Title')}
      {field('author', 'Author')}
      {field('year', 'Year', true)}
      {field('isbn', 'ISBN')}
      <button type="submit" disabled={busy}>
        Save
      </button>
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
