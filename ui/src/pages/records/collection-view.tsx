import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api.js';
import { type Collection, offers, recordLabel, singular, type StoredRecord } from '../../collections.js';
import { Failure, Loading } from '../shared.js';
import { recordActionsOf } from './extensions.js';
import { Filters } from './filters.js';
import {
  filteredField,
  isFiltered,
  limitOf,
  offsetOf,
  sortOf,
  withFilters,
  withPage,
  withSortBy,
} from './list-query.js';
import { Pager } from './pager.js';
import { deleteWords, type Notice, problemNotice } from './record-actions.js';
import { RecordForm, type Saved } from './record-form.js';
import { RecordTable } from './record-table.js';
import { useRecordPage } from './use-record-page.js';

/** The open form: a new record, or the record being edited. */
type Editing = { record?: StoredRecord };

/** The query's filters alone: the filter form starts again from them when they change. */
const filterPart = (search: URLSearchParams): string =>
  [...search].filter(([key]) => key === 'q' || filteredField(key)).join('&');

/** One collection: its records filtered, sorted and paged as the query says, and the forms to change them. */
export function CollectionView({
  collection,
  collections,
  query,
  navigate,
}: {
  collection: Collection;
  collections: Collection[];
  /** The list query, as in the URL hash. */
  query: string;
  navigate: (search: URLSearchParams, options?: { replace?: boolean }) => void;
}) {
  const search = new URLSearchParams(query);
  const listable = offers(collection, 'list');
  const [version, setVersion] = useState(0);
  const { page, error, loading } = useRecordPage(collection.path, search.toString(), version, listable);
  const [notice, setNotice] = useState<Notice>();
  const [editing, setEditing] = useState<Editing>();
  const opener = useRef<HTMLElement | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const reload = () => setVersion((value) => value + 1);
  const sort = sortOf(search, collection);
  const offset = offsetOf(search);
  const limit = limitOf(search);
  const name = singular(collection.name);
  const id = useId();
  // What this collection adds to the browser (columns, buttons, names), if anything.
  const extras = useMemo(() => recordActionsOf(collection, collections), [collection, collections]);
  const labelOf = (record: StoredRecord) => extras.label?.(record) ?? recordLabel(collection, record);
  const removeWords = extras.remove ?? deleteWords;

  // The last record of the last page went (deleted, or filtered out elsewhere): show the page before.
  useEffect(() => {
    if (page && page.items.length === 0 && offset > 0)
      navigate(withPage(search, Math.max(0, offset - limit)), { replace: true });
  }, [page]);

  const open = (next: Editing) => {
    opener.current = document.activeElement as HTMLElement | null;
    setNotice(undefined);
    setEditing(next);
  };
  const close = () => {
    setEditing(undefined);
    // Focus goes back where it was before the form opened, or to the heading if that is gone.
    requestAnimationFrame(() => (opener.current?.isConnected ? opener.current : heading.current)?.focus());
  };
  const saved = ({ record, created }: Saved) => {
    const label = record ? labelOf(record) : editing?.record && labelOf(editing.record);
    setNotice({
      kind: 'status',
      text: !record
        ? `Nothing changed in ${label}.`
        : created
          ? `Created ${name} ${label}.`
          : `Saved ${label}.`,
    });
    close();
    reload();
  };
  const remove = async (record: StoredRecord): Promise<boolean> => {
    const label = labelOf(record);
    const { done } = removeWords;
    setNotice(undefined);
    try {
      await api(`${collection.path}/${encodeURIComponent(record.id)}`, { method: 'DELETE' });
      setNotice({ kind: 'status', text: `${done[0]!.toUpperCase()}${done.slice(1)} ${label}.` });
      if (editing?.record?.id === record.id) setEditing(undefined);
      heading.current?.focus();
      reload();
      return true;
    } catch (failure) {
      setNotice(problemNotice(`${label} was not ${done}`, failure));
      reload();
      return false;
    }
  };

  const queryProblem = error instanceof ApiError && error.problem.status === 422 ? error.problem : undefined;
  const invalid = new Set(
    (queryProblem?.errors ?? []).map(({ path }) => {
      const key = path.replace(/^query\./, '');
      return filteredField(key) ?? key;
    }),
  );

  return (
    <section class="collection" aria-labelledby={`${id}-title`}>
      <div class="toolbar">
        <h3 id={`${id}-title`} ref={heading} tabIndex={-1}>
          {collection.name}
        </h3>
        {offers(collection, 'create') && (
          <button type="button" class="primary" onClick={() => open({})}>
            New {name}
          </button>
        )}
        <p role="status" class="notice">
          {notice?.kind === 'status' ? notice.text : ''}
        </p>
      </div>
      {collection.description && <p class="hint">{collection.description}</p>}
      {notice?.kind === 'alert' && (
        <p role="alert" class="error">
          {notice.text}
          {notice.hint && <small> {notice.hint}</small>}
        </p>
      )}
      {editing && (
        <RecordForm
          key={editing.record?.id ?? 'new'}
          collection={collection}
          collections={collections}
          record={editing.record}
          onSaved={saved}
          onCancel={close}
        />
      )}
      {!listable ? (
        <p class="placeholder" role="status">
          {collection.name} has no list route, so its records cannot be shown here.
        </p>
      ) : (
        <>
          <Filters
            collection={collection}
            collections={collections}
            search={search}
            applied={filterPart(search)}
            invalid={invalid}
            problemId={`${id}-problem`}
            onApply={(filters, q) => navigate(withFilters(search, collection, filters, q))}
          />
          {queryProblem ? (
            <div role="alert" class="error query-error" id={`${id}-problem`}>
              <p>The server did not accept this query:</p>
              <ul>
                {(queryProblem.errors ?? [{ path: '', message: queryProblem.detail }]).map(
                  ({ path, message }) => (
                    <li key={path + message}>
                      {path && <code>{path.replace(/^query\./, '')}</code>} {message}
                    </li>
                  ),
                )}
              </ul>
              <button type="button" onClick={() => navigate(new URLSearchParams())}>
                Reset the query
              </button>
            </div>
          ) : error ? (
            <Failure error={error} />
          ) : !page ? (
            loading && <Loading />
          ) : page.total === 0 ? (
            <p class="empty">
              {isFiltered(search)
                ? `No ${collection.name} match these filters.`
                : `No ${collection.name} yet.`}
            </p>
          ) : (
            <>
              <RecordTable
                collection={collection}
                collections={collections}
                records={page.items}
                sort={sort}
                extras={extras}
                onSort={(column) => navigate(withSortBy(search, sort, column))}
                onEdit={(record) => open({ record })}
                onDelete={remove}
                notify={setNotice}
                reload={reload}
              />
              <Pager
                name={collection.name}
                offset={page.offset}
                limit={page.limit}
                shown={page.items.length}
                total={page.total}
                totalExact={page.totalExact}
                hasNext={page.next !== null}
                onPage={(nextOffset, nextLimit) => navigate(withPage(search, nextOffset, nextLimit))}
              />
            </>
          )}
        </>
      )}
    </section>
  );
}
