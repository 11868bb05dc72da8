import { Fragment } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import type { LoggedChange } from '../../../src/core/change-log.js';
import { api, ApiError } from '../api.js';
import { shortId } from '../collections.js';
import { Failure, Loading, Scroll, Unavailable } from './shared.js';
import { Subscribers } from './subscribers.js';

/** What `GET /admin/changes` answers. */
interface ChangeList {
  head: number;
  floor: number;
  retention: { time: string; maxChanges: number | null; held: number | null };
  items: LoggedChange[];
}

/** Changes a page shows. */
const pageSize = 50;

/**
 * `books?before=120` (the hash after `#/changes/`) → the collection shown
 * (all when empty) and the seq the page ends before (the newest when absent).
 */
function parsePath(path: string): { collection: string; before?: number } {
  const [name = '', query = ''] = path.split(/\?(.*)/s);
  const before = Number(new URLSearchParams(query).get('before'));
  let collection = name;
  try {
    collection = decodeURIComponent(name);
  } catch {
    // A name as typed, when it is not valid percent-encoding.
  }
  return { collection, ...(Number.isInteger(before) && before > 0 ? { before } : {}) };
}

const changesHash = (collection: string, before?: number): string =>
  `#/changes/${encodeURIComponent(collection)}${before ? `?before=${before}` : ''}`;

const count = (value: number): string => value.toLocaleString('en');

/** What the log keeps, in words: `7d, at most 1,000,000 changes`. */
function keeps({ time, maxChanges }: ChangeList['retention']): string {
  const size = maxChanges === null ? 'however many' : `at most ${count(maxChanges)} changes`;
  return time === 'off'
    ? maxChanges === null
      ? 'every change (nothing trims it here)'
      : size
    : `${time}, ${size}`;
}

/**
 * The app's change log: the latest changes, newest first, of every
 * collection or one, paged back by seq; a row opens to its record's JSON.
 * Below, who is subscribed and how far along each subscription is.
 */
export function ChangesPage({ path }: { path: string }) {
  const { collection, before } = parsePath(path);
  const [collections, setCollections] = useState<string[]>([]);
  const [list, setList] = useState<ChangeList>();
  const [error, setError] = useState<Error>();
  const [version, setVersion] = useState(0);
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const selectId = useId();

  useEffect(() => {
    // The picker only: without it, the log still shows every collection.
    api<{ collections: Array<{ name: string }> }>('/admin/collections').then(
      (answer) => setCollections(answer.collections.map(({ name }) => name)),
      () => undefined,
    );
  }, []);
  useEffect(() => {
    let live = true;
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (collection) query.set('collection', collection);
    if (before) query.set('before', String(before));
    api<ChangeList>(`/admin/changes?${query}`).then(
      (answer) => live && (setList(answer), setError(undefined)),
      (failure: Error) => live && setError(failure),
    );
    return () => {
      live = false;
    };
  }, [collection, before, version]);

  const toggle = (seq: number) =>
    setOpen((shown) => {
      const next = new Set(shown);
      if (!next.delete(seq)) next.add(seq);
      return next;
    });
  const last = list?.items.at(-1);
  // Older changes may exist while a page is full and its last change is above the floor.
  const hasOlder = Boolean(list && last && list.items.length === pageSize && last.seq > list.floor + 1);
  // A collection the log names but the app no longer has stays choosable while it is shown.
  const choices =
    collection && !collections.includes(collection) ? [...collections, collection] : collections;

  const body =
    error instanceof ApiError && error.problem.status === 404 ? (
      <Unavailable message={`No change log here: ${error.message}.`} />
    ) : error ? (
      <Failure error={error} />
    ) : !list ? (
      <Loading />
    ) : (
      <>
        <dl class="facts">
          <dt>Head</dt>
          <dd>
            {count(list.head)} <small>(the last change appended)</small>
          </dd>
          <dt>Floor</dt>
          <dd>
            {count(list.floor)}{' '}
            <small>{list.floor ? '(changes up to it were dropped)' : '(nothing dropped yet)'}</small>
          </dd>
          <dt>Kept</dt>
          <dd>{keeps(list.retention)}</dd>
          {list.retention.held !== null && (
            <>
              <dt>Held</dt>
              <dd>
                {count(list.retention.held)}{' '}
                <small>(a realtime subscriber has read up to it: the size keeps every change after it)</small>
              </dd>
            </>
          )}
        </dl>
        <div class="toolbar">
          <span>
            <label for={selectId}>Collection </label>
            <select
              id={selectId}
              value={collection}
              onChange={(event) => (location.hash = changesHash((event.target as HTMLSelectElement).value))}
            >
              <option value="">All collections</option>
              {choices.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </span>
          <button type="button" onClick={() => setVersion((value) => value + 1)}>
            Refresh
          </button>
        </div>
        {list.items.length === 0 ? (
          <p class="empty">
            {before
              ? 'No older change is kept.'
              : collection
                ? `No change of ${collection} is in the log.`
                : 'No change yet: every write will show here.'}
          </p>
        ) : (
          <Scroll>
            <table class="changes">
              <thead>
                <tr>
                  <th>
                    <span class="visually-hidden">Record JSON</span>
                  </th>
                  <th>Seq</th>
                  <th>Time</th>
                  <th>Collection</th>
                  <th>Action</th>
                  <th>Record</th>
                  <th>Actor</th>
                </tr>
              </thead>
              <tbody>
                {list.items.map((change) => {
                  const shown = open.has(change.seq);
                  return (
                    <Fragment key={change.seq}>
                      <tr>
                        <td>
                          <button
                            type="button"
                            class="expand"
                            aria-expanded={shown}
                            aria-label={`Record of change ${change.seq}`}
                            onClick={() => toggle(change.seq)}
                          >
                            {shown ? '▾' : '▸'}
                          </button>
                        </td>
                        <td>{change.seq}</td>
                        <td>{new Date(change.at).toLocaleString()}</td>
                        <td>
                          <code>{change.collection}</code>
                        </td>
                        <td>
                          <span class={`action ${change.action}`}>{change.action}</span>
                        </td>
                        <td>
                          <code title={change.id}>{shortId(change.id)}</code>
                        </td>
                        <td>
                          {change.actor === null ? <small>the app</small> : <code>{change.actor}</code>}
                        </td>
                      </tr>
                      {shown && (
                        <tr class="record-json">
                          <td colSpan={7}>
                            <pre>{JSON.stringify(change.record, null, 2)}</pre>
                          </td>
                        </tr>
                      )}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
          </Scroll>
        )}
        <nav class="pager" aria-label="Changes pages">
          <button type="button" disabled={!before} onClick={() => (location.hash = changesHash(collection))}>
            Newest
          </button>
          <button
            type="button"
            disabled={!hasOlder}
            onClick={() => last && (location.hash = changesHash(collection, last.seq))}
          >
            Older
          </button>
          {list.items.length > 0 && (
            <span aria-live="polite">
              seq {list.items[0]!.seq} to {last!.seq}
            </span>
          )}
        </nav>
      </>
    );
  return (
    <section>
      <h2>Changes</h2>
      <p class="hint">
        Every write, newest first, from the app’s change log: what realtime delivers, and what a client that
        was away replays.
      </p>
      {body}
      <Subscribers />
    </section>
  );
}
