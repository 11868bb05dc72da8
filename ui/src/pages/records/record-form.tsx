import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api.js';
import {
  type Collection,
  type Field,
  type StoredRecord,
  recordLabel,
  singular,
  writableFields,
} from '../../collections.js';
import { FieldControl } from './field-control.js';
import { draftOf, parseDraft } from './field-values.js';

type Texts = Record<string, string>;

/** The texts a form starts with: the record's values, or for a new one the defaults. */
function initialTexts(fields: Field[], record?: StoredRecord): Texts {
  return Object.fromEntries(
    fields.map((field) => {
      if (record) return [field.name, draftOf(field, record[field.name])];
      if (field.default !== undefined) return [field.name, draftOf(field, field.default)];
      return [field.name, field.ui.input === 'checkbox' ? 'false' : ''];
    }),
  );
}

/**
 * The body to send: for a new record every filled field (empty ones are left
 * out, so defaults apply); for an edit only the fields whose text changed
 * (emptied ones become null). Or the errors the form can tell by itself.
 */
function bodyOf(
  fields: Field[],
  texts: Texts,
  initial: Texts,
  unreadable: Record<string, boolean>,
  editing: boolean,
): { body: Record<string, unknown> } | { errors: Record<string, string> } {
  const body: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const text = texts[field.name] ?? '';
    if (editing && text === initial[field.name] && !unreadable[field.name]) continue;
    const parsed = parseDraft(field, text, unreadable[field.name]);
    if ('error' in parsed) errors[field.name] = parsed.error;
    else if (parsed.value !== null) body[field.name] = parsed.value;
    else if (field.required && (editing || field.default === undefined))
      errors[field.name] = 'must not be empty';
    else if (editing) body[field.name] = null;
  }
  return Object.keys(errors).length ? { errors } : { body };
}

/** What became of a save: the record as the server answered it, or undefined when nothing changed. */
export type Saved = { record?: StoredRecord; created: boolean };

/**
 * A form generated from a collection's writable fields, for a new record or
 * to edit one (PATCH with the changed fields only). The server's field
 * errors show next to their fields, a conflict above the form; what was
 * typed stays.
 */
export function RecordForm({
  collection,
  collections,
  record,
  onSaved,
  onCancel,
}: {
  collection: Collection;
  collections: Collection[];
  record?: StoredRecord;
  onSaved: (saved: Saved) => void;
  onCancel: () => void;
}) {
  const fields = writableFields(collection);
  const [initial] = useState(() => initialTexts(fields, record));
  const [texts, setTexts] = useState(initial);
  const [unreadable, setUnreadable] = useState<Record<string, boolean>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [messages, setMessages] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const id = useId();
  const title = record ? `Edit ${recordLabel(collection, record)}` : `New ${singular(collection.name)}`;

  // The first field takes the focus in the commit that shows the form: an effect runs a frame later,
  // and on a busy machine that can be after the user (or a test) has started typing in another field.
  useLayoutEffect(() => {
    form.current?.querySelector<HTMLElement>('input, select, textarea')?.focus();
  }, []);
  // After a failed save, the first field in error (or the message above the form) takes the focus.
  const focusProblem = () =>
    requestAnimationFrame(() =>
      form.current?.querySelector<HTMLElement>('[aria-invalid="true"], [role="alert"]')?.focus(),
    );

  const submit = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setMessages([]);
    const result = bodyOf(fields, texts, initial, unreadable, Boolean(record));
    if ('errors' in result) {
      setErrors(result.errors);
      return focusProblem();
    }
    if (record && Object.keys(result.body).length === 0) return onSaved({ created: false });
    setBusy(true);
    try {
      const saved = record
        ? await api<StoredRecord>(`${collection.path}/${encodeURIComponent(record.id)}`, {
            method: 'PATCH',
            json: result.body,
          })
        : await api<StoredRecord>(collection.path, { method: 'POST', json: result.body });
      onSaved({ record: saved, created: !record });
    } catch (failure) {
      const problem = failure instanceof ApiError ? failure.problem : undefined;
      const byField: Record<string, string> = {};
      const other: string[] = [];
      for (const { path, message } of problem?.errors ?? []) {
        // `body.email`; a bare field name is taken too (some checks name the field alone).
        const name = path.replace(/^body\.?/, '');
        if (Object.hasOwn(texts, name)) byField[name] = byField[name] ?? message;
        else other.push(message);
      }
      setErrors(byField);
      if (problem?.status === 409) other.unshift(problem.detail || problem.title);
      else if (!problem) other.unshift(String(failure));
      else if (!problem.errors?.length) other.unshift(`${problem.title}: ${problem.detail}`);
      setMessages(other);
      focusProblem();
    } finally {
      setBusy(false);
    }
  };

  return (
    <form ref={form} class="record-form" aria-labelledby={`${id}-title`} noValidate onSubmit={submit}>
      <h4 id={`${id}-title`}>{title}</h4>
      {messages.length > 0 && (
        <div role="alert" class="error" tabIndex={-1}>
          {messages.map((message, index) => (
            <p key={index}>{message}</p>
          ))}
        </div>
      )}
      {fields.length === 0 && <p class="empty">{collection.name} has no fields a client may set.</p>}
      <div class="fields">
        {fields.map((field) => {
          const inputId = `${id}-field-${field.name}`;
          const error = errors[field.name];
          return (
            <div key={field.name} class={`field ${field.type}`}>
              <span class="label">
                <label for={inputId}>{field.name}</label>
                {field.required && field.type !== 'boolean' && (
                  <span class="required" aria-hidden="true">
                    *
                  </span>
                )}
              </span>
              <FieldControl
                field={field}
                id={inputId}
                text={texts[field.name] ?? ''}
                invalid={Boolean(error)}
                describedBy={error ? `${inputId}-error` : undefined}
                collections={collections}
                onInput={(text, bad = false) => {
                  setTexts((current) => ({ ...current, [field.name]: text }));
                  setUnreadable((current) => ({ ...current, [field.name]: bad }));
                }}
              />
              {error && (
                <span class="field-error" id={`${inputId}-error`}>
                  {error}
                </span>
              )}
            </div>
          );
        })}
      </div>
      <p class="hint">
        <span aria-hidden="true">*</span> required
      </p>
      <div class="buttons">
        <button type="submit" disabled={busy}>
          {record ? 'Save' : 'Create'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
