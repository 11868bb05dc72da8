import { Fragment } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  type Collection,
  type Field,
  offers,
  recordLabel,
  shortId,
  type StoredRecord,
} from '../../collections.js';
import { Scroll } from '../shared.js';
import { cellText } from './field-values.js';
import { dataHash, directionOf } from './list-query.js';
import {
  deleteWords,
  type Notice,
  type RecordActions,
  type RowAction,
  type RowContext,
} from './record-actions.js';

/** A column: a field, or one every record has (id first, createdAt last). */
type Column = Pick<Field, 'name' | 'type' | 'ui'> & { sortable: boolean; references?: string };

const columnsOf = (collection: Collection): Column[] => [
  { name: 'id', type: 'text', ui: { input: 'text' }, sortable: true },
  ...collection.fields.map((field) => ({ ...field, sortable: field.operators.length > 0 })),
  { name: 'createdAt', type: 'datetime', ui: { input: 'datetime' }, sortable: true },
];

function Cell({
  column,
  record,
  collections,
}: {
  column: Column;
  record: StoredRecord;
  collections: Collection[];
}) {
  const value = record[column.name];
  if (value === null || value === undefined || value === '') return <td />;
  if (column.name === 'id') {
    return (
      <td>
        <code title={String(value)}>{shortId(String(value))}</code>
      </td>
    );
  }
  if (column.type === 'reference') {
    // The id, linked to the referenced record in its own collection when that can be listed.
    const target = collections.find((collection) => collection.name === column.references);
    const id = String(value);
    const code = <code title={id}>{shortId(id)}</code>;
    return (
      <td>
        {target && offers(target, 'list') ? (
          <a href={dataHash(target.name, new URLSearchParams({ id }))} aria-label={`${target.name} ${id}`}>
            {code}
          </a>
        ) : (
          code
        )}
      </td>
    );
  }
  const text = cellText(column, value);
  return column.type === 'json' ? (
    <td>
      <code class="json" title={text}>
        {text}
      </code>
    </td>
  ) : (
    <td title={text.length > 40 ? text : undefined}>{text}</td>
  );
}

/** The buttons of a row; one that asks first shows its question in the row itself, in their place. */
function RowActions({ actions }: { actions: RowAction[] }) {
  const [asking, setAsking] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [value, setValue] = useState('');
  const [invalid, setInvalid] = useState<string>();
  const cancel = useRef<HTMLButtonElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const buttons = useRef(new Map<string, HTMLButtonElement>());
  const asked = useRef<string | undefined>(undefined);
  const inputId = useId();
  useLayoutEffect(() => {
    // Focus follows the question: on to its input or Cancel (the harmless answer), back to the button that asked after it,
    // in the same commit that shows or hides the question (an effect would leave a painted frame with focus nowhere).
    if (asking) (input.current ?? cancel.current)?.focus();
    else if (asked.current) buttons.current.get(asked.current)?.focus();
    asked.current = asking;
  }, [asking]);
  const ask = (key?: string) => {
    setValue('');
    setInvalid(undefined);
    setAsking(key);
  };
  const perform = (action: RowAction, given?: string) => {
    const done = action.run(given);
    if (!done) return ask(undefined);
    setBusy(true);
    // A row that goes away goes with the reload; one that stays gets its buttons back.
    void done.then((gone) => {
      if (gone) return;
      setBusy(false);
      ask(undefined);
    });
  };
  const question = actions.find((action) => action.key === asking)?.confirm;
  if (asking && question) {
    const action = actions.find(({ key }) => key === asking)!;
    const wanted = question.input;
    const answer = (event: Event) => {
      event.preventDefault();
      if (busy) return;
      const problem = wanted?.check?.(value);
      if (problem) {
        setInvalid(problem);
        return input.current?.focus();
      }
      perform(action, wanted ? value : undefined);
    };
    return (
      <td class="actions">
        <form class="confirm" noValidate onSubmit={answer}>
          <span role="group" aria-label={question.name} class="confirm">
            <span>{question.question}</span>{' '}
            {wanted && (
              <>
                <label for={inputId}>{wanted.label}</label>{' '}
                <input
                  id={inputId}
                  ref={input}
                  type="password"
                  autoComplete="new-password"
                  value={value}
                  aria-invalid={invalid ? 'true' : undefined}
                  aria-describedby={invalid ? `${inputId}-error` : undefined}
                  onInput={(event) => {
                    setValue(event.currentTarget.value);
                    setInvalid(undefined);
                  }}
                />{' '}
                {invalid && (
                  <span class="field-error" id={`${inputId}-error`}>
                    {invalid}
                  </span>
                )}{' '}
              </>
            )}
            <button type="submit" class="danger" disabled={busy}>
              {question.yes}
            </button>{' '}
            <button type="button" ref={cancel} onClick={() => ask(undefined)}>
              Cancel
            </button>
          </span>
        </form>
      </td>
    );
  }
  return (
    <td class="actions">
      {actions.map((action, index) => (
        <Fragment key={action.key}>
          {index > 0 && ' '}
          <button
            type="button"
            ref={(element) => {
              if (element) buttons.current.set(action.key, element);
              else buttons.current.delete(action.key);
            }}
            class={action.danger ? 'danger' : undefined}
            aria-label={action.label}
            // Not `disabled`: the button keeps the focus while its call runs.
            aria-disabled={busy ? 'true' : undefined}
            onClick={() => {
              if (busy) return;
              if (action.confirm) ask(action.key);
              else perform(action);
            }}
          >
            {action.text}
          </button>
        </Fragment>
      ))}
    </td>
  );
}

/** The records of one page: a column per field, headers that sort, actions per row, and the collection's extras. */
export function RecordTable({
  collection,
  collections,
  records,
  sort,
  extras,
  onSort,
  onEdit,
  onDelete,
  notify,
  reload,
}: {
  collection: Collection;
  collections: Collection[];
  records: StoredRecord[];
  sort: string;
  extras: RecordActions;
  onSort: (column: string) => void;
  onEdit: (record: StoredRecord) => void;
  /** Resolves true when the record was deleted. */
  onDelete: (record: StoredRecord) => Promise<boolean>;
  notify: (notice?: Notice) => void;
  reload: () => void;
}) {
  const columns = columnsOf(collection);
  const extraColumns = extras.columns ?? [];
  const canEdit = offers(collection, 'update');
  const canDelete = offers(collection, 'delete');
  const remove = extras.remove ?? deleteWords;
  const actionsOf = (row: RowContext): RowAction[] => [
    ...(extras.actions?.(row) ?? []),
    ...(canEdit
      ? [{ key: 'edit', text: 'Edit', label: `Edit ${row.label}`, run: () => onEdit(row.record) }]
      : []),
    ...(canDelete
      ? [
          {
            key: 'delete',
            text: remove.verb,
            label: `${remove.verb} ${row.label}`,
            danger: true,
            confirm: {
              question: `${remove.verb} ${row.label}?`,
              yes: `Yes, ${remove.verb.toLowerCase()}`,
              name: `Confirm ${remove.doing} ${row.label}`,
            },
            run: () => onDelete(row.record),
          },
        ]
      : []),
  ];
  const rows = records.map((record): RowContext => ({
    record,
    collection,
    collections,
    label: extras.label?.(record) ?? recordLabel(collection, record),
    notify,
    reload,
  }));
  const hasActions = canEdit || canDelete || extras.actions !== undefined;
  return (
    <Scroll>
      <table class="records">
        <caption class="visually-hidden">{collection.name}, sortable by the column headers</caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const direction = directionOf(sort, column.name);
              return (
                <th key={column.name} scope="col" aria-sort={direction}>
                  {column.sortable ? (
                    <button type="button" class="sort" onClick={() => onSort(column.name)}>
                      {column.name}
                      <span aria-hidden="true">
                        {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
                      </span>
                    </button>
                  ) : (
                    column.name
                  )}
                </th>
              );
            })}
            {extraColumns.map(({ name }) => (
              <th key={`extra-${name}`} scope="col">
                {name}
              </th>
            ))}
            {hasActions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.record.id}>
              {columns.map((column) => (
                <Cell key={column.name} column={column} record={row.record} collections={collections} />
              ))}
              {extraColumns.map(({ name, Cell: Extra }) => (
                <Extra key={`extra-${name}`} {...row} />
              ))}
              {hasActions && <RowActions actions={actionsOf(row)} />}
            </tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  );
}
