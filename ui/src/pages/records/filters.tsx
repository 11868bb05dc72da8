import { useEffect, useId, useState } from 'preact/hooks';
import type { Collection, Field } from '../../collections.js';
import { filterDraft, filterValue, inputTypeOf, operatorLabels, optionLabel } from './field-values.js';
import { type Filter, filterOf } from './list-query.js';
import { useReferenceOptions } from './reference-options.js';

/** The value input of one filter: a select where the values are few, else an input of the field's type. */
function FilterInput({
  field,
  id,
  text,
  invalid,
  problemId,
  collections,
  onInput,
}: {
  field: Field;
  id: string;
  text: string;
  invalid: boolean;
  problemId: string | undefined;
  collections: Collection[];
  onInput: (text: string) => void;
}) {
  const common = {
    id,
    name: field.name,
    'aria-invalid': invalid ? ('true' as const) : undefined,
    'aria-describedby': invalid ? problemId : undefined,
  };
  const { input, step } = field.ui;
  if (input === 'reference') return <ReferenceFilter {...{ field, collections, text, onInput, common }} />;
  // A boolean (checkbox or select), an enum, or a multi-valued enum (the records holding one value).
  if (input === 'checkbox' || input === 'select' || input === 'multi-select') {
    const values = input === 'checkbox' ? ['true', 'false'] : (field.ui.options ?? []);
    return (
      <select
        {...common}
        value={text}
        onChange={(event) => onInput((event.target as HTMLSelectElement).value)}
      >
        <option value="">any</option>
        {values.map((value) => (
          <option key={value} value={value}>
            {optionLabel(field, value)}
          </option>
        ))}
      </select>
    );
  }
  return (
    <input
      {...common}
      type={inputTypeOf(field) as 'text'}
      step={step}
      value={text}
      onInput={(event) => onInput((event.target as HTMLInputElement).value)}
    />
  );
}

/** A reference filter: the target's records to pick from, or an id to type when they cannot be listed. */
function ReferenceFilter({
  field,
  collections,
  text,
  onInput,
  common,
}: {
  field: Field;
  collections: Collection[];
  text: string;
  onInput: (text: string) => void;
  common: {
    id: string;
    name: string;
    'aria-invalid': 'true' | undefined;
    'aria-describedby': string | undefined;
  };
}) {
  const { target, choices, error } = useReferenceOptions(field, collections);
  if (!target || error) {
    return (
      <input
        {...common}
        type="text"
        placeholder="id"
        value={text}
        onInput={(event) => onInput((event.target as HTMLInputElement).value)}
      />
    );
  }
  const options = choices?.options ?? [];
  return (
    <select {...common} value={text} onChange={(event) => onInput((event.target as HTMLSelectElement).value)}>
      <option value="">any</option>
      {text && !options.some((option) => option.id === text) && <option value={text}>{text}</option>}
      {options.map((option) => (
        <option key={option.id} value={option.id}>
          {option.label}
        </option>
      ))}
    </select>
  );
}

/**
 * Filters generated from a collection's fields (an operator and a value
 * each) and its free-text search. Apply hands them over as the query's
 * filters; `invalid` names the fields the server refused.
 */
export function Filters({
  collection,
  collections,
  search,
  applied,
  invalid,
  problemId,
  onApply,
}: {
  collection: Collection;
  collections: Collection[];
  search: URLSearchParams;
  /** The query's filters alone, as text: when it changes, the inputs start again from the query. */
  applied: string;
  invalid: Set<string>;
  /** The id of the server's message about the query, which invalid inputs point to. */
  problemId?: string;
  onApply: (filters: Record<string, Filter>, q: string) => void;
}) {
  const fields = collection.fields.filter((field) => field.operators.length > 0);
  const draftsOf = (query: URLSearchParams): Record<string, Filter> =>
    Object.fromEntries(
      fields.map((field) => {
        const filter = filterOf(query, field.name);
        const op = filter && field.operators.includes(filter.op) ? filter.op : (field.operators[0] ?? 'eq');
        return [field.name, { op, value: filter ? filterDraft(field, filter.value) : '' }];
      }),
    );
  const [drafts, setDrafts] = useState(() => draftsOf(search));
  const [q, setQ] = useState(search.get('q') ?? '');
  // The filters in the URL changed (Apply, Back, a link): the inputs show them. The same
  // inputs stay in the page, so the focus stays where it was.
  useEffect(() => {
    setDrafts(draftsOf(search));
    setQ(search.get('q') ?? '');
  }, [applied]);
  const id = useId();
  const set = (name: string, change: Partial<Filter>) =>
    setDrafts((current) => ({ ...current, [name]: { ...current[name]!, ...change } }));
  const chosen = Object.fromEntries(
    fields.map((field) => {
      const draft = drafts[field.name]!;
      return [field.name, { op: draft.op, value: filterValue(field, draft.value) }];
    }),
  );
  const searchable = collection.searchable.length > 0;
  if (!fields.length && !searchable) return null;
  return (
    <form
      class="filters"
      aria-label={`Filter ${collection.name}`}
      // The server judges the values and says what is wrong, field by field.
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        onApply(chosen, q);
      }}
    >
      {searchable && (
        <div class="filter search">
          <label for={`${id}-q`}>Search</label>
          <input
            id={`${id}-q`}
            type="search"
            value={q}
            aria-invalid={invalid.has('q') ? 'true' : undefined}
            aria-describedby={invalid.has('q') && problemId ? `${id}-q-hint ${problemId}` : `${id}-q-hint`}
            onInput={(event) => setQ((event.target as HTMLInputElement).value)}
          />
          <small id={`${id}-q-hint`} class="hint">
            in {collection.searchable.join(', ')}
          </small>
        </div>
      )}
      {fields.map((field) => {
        const draft = drafts[field.name]!;
        return (
          <div key={field.name} class="filter">
            <label for={`${id}-filter-${field.name}`}>{field.name}</label>
            <div class="filter-row">
              {field.operators.length > 1 && (
                <select
                  aria-label={`${field.name} operator`}
                  value={draft.op}
                  onChange={(event) => set(field.name, { op: (event.target as HTMLSelectElement).value })}
                >
                  {field.operators.map((op) => (
                    <option key={op} value={op}>
                      {operatorLabels[op] ?? op}
                    </option>
                  ))}
                </select>
              )}
              <FilterInput
                field={field}
                id={`${id}-filter-${field.name}`}
                text={draft.value}
                invalid={invalid.has(field.name)}
                problemId={problemId}
                collections={collections}
                onInput={(value) => set(field.name, { value })}
              />
            </div>
          </div>
        );
      })}
      <div class="buttons">
        <button type="submit">Apply</button>
        <button
          type="button"
          onClick={() => {
            setDrafts(
              Object.fromEntries(fields.map((field) => [field.name, { ...drafts[field.name]!, value: '' }])),
            );
            setQ('');
            onApply({}, '');
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
