import { useEffect, useRef, useState } from 'preact/hooks';
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

/** A column: a field, or one every record has (id first, createdAt last). */
type Column = Pick<Field, 'name' | 'type'> & { sortable: boolean; references?: string };

const columnsOf = (collection: Collection): Column[] => [
  { name: 'id', type: 'text', sortable: true },
  ...collection.fields.map((field) => ({ ...field, sortable: field.operators.length > 0 })),
  { name: 'createdAt', type: 'datetime', sortable: true },
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

/** The actions of a row: Edit, and Delete with a confirm step in the row itself. */
function RowActions({
  label,
  canEdit,
  canDelete,
  onEdit,
  onDelete,
}: {
  label: string;
  canEdit: boolean;
  canDelete: boolean;
  onEdit: () => void;
  onDelete: () => Promise<boolean>;
}) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const remove = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    // Focus follows the question: on to Cancel (the harmless answer), back to Delete after it.
    if (confirming) cancel.current?.focus();
    else if (asked.current) remove.current?.focus();
    asked.current = confirming;
  }, [confirming]);
  if (confirming) {
    return (
      <td class="actions">
        <span role="group" aria-label={`Confirm deleting ${label}`} class="confirm">
          <span>Delete {label}?</span>{' '}
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => {
              setBusy(true);
              // A deleted row goes away with the reload; one that stays gets its Delete button back.
              void onDelete().then((deleted) => {
                if (deleted) return;
                setBusy(false);
                setConfirming(false);
              });
            }}
          >
            Yes, delete
          </button>{' '}
          <button type="button" ref={cancel} onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      </td>
    );
  }
  return (
    <td class="actions">
      {canEdit && (
        <button type="button" aria-label={`Edit ${label}`} onClick={onEdit}>
          Edit
        </button>
      )}{' '}
      {canDelete && (
        <button
          type="button"
          ref={remove}
          class="danger"
          aria-label={`Delete ${label}`}
          onClick={() => setConfirming(true)}
        >
          Delete
        </button>
      )}
    </td>
  );
}

/** The records of one page: a column per field, headers that sort, actions per row. */
export function RecordTable({
  collection,
  collections,
  records,
  sort,
  onSort,
  onEdit,
  onDelete,
}: {
  collection: Collection;
  collections: Collection[];
  records: StoredRecord[];
  sort: string;
  onSort: (column: string) => void;
  onEdit: (record: StoredRecord) => void;
  /** Resolves true when the record was deleted. */
  onDelete: (record: StoredRecord) => Promise<boolean>;
}) {
  const columns = columnsOf(collection);
  const canEdit = offers(collection, 'update');
  const canDelete = offers(collection, 'delete');
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
            {(canEdit || canDelete) && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {records.map((record) => (
            <tr key={record.id}>
              {columns.map((column) => (
                <Cell key={column.name} column={column} record={record} collections={collections} />
              ))}
              {(canEdit || canDelete) && (
                <RowActions
                  label={recordLabel(collection, record)}
                  canEdit={canEdit}
                  canDelete={canDelete}
                  onEdit={() => onEdit(record)}
                  onDelete={() => onDelete(record)}
                />
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  );
}
