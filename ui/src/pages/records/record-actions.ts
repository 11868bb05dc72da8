import type { ComponentType } from 'preact';
import { ApiError } from '../../api.js';
import type { Collection, StoredRecord } from '../../collections.js';

/**
 * What a collection may add to the generic data browser: a better name for
 * its records, columns computed from elsewhere, buttons of its own in each
 * row, and its own word for Delete. Collections register theirs in
 * `extensions.ts`; every other collection gets the plain browser.
 */
export interface RecordActions {
  /** How a record is called on buttons and in messages, when its first text field does not say it well. */
  label?: (record: StoredRecord) => string;
  /** Columns after the record's own, e.g. a count from another collection. Not sortable. */
  columns?: Array<{ name: string; Cell: ComponentType<RowContext> }>;
  /** Buttons before Edit and Delete. */
  actions?: (row: RowContext) => RowAction[];
  /** The words of Delete, e.g. revoke for a session. */
  remove?: RemoveWords;
}

export interface RemoveWords {
  /** The button: `Delete`. */
  verb: string;
  /** The confirm group's name: `Confirm deleting …`. */
  doing: string;
  /** The message after: `Deleted …`. */
  done: string;
}

export const deleteWords: RemoveWords = { verb: 'Delete', doing: 'deleting', done: 'deleted' };

/** A message above the records: a status, or an alert with the server's hint when it gave one. */
export type Notice = { kind: 'status' | 'alert'; text: string; hint?: string };

/** What the extras of a row get to work with. */
export interface RowContext {
  record: StoredRecord;
  collection: Collection;
  collections: Collection[];
  /** The record's name, as its buttons say it. */
  label: string;
  /** Shows a message above the table (undefined clears it). */
  notify: (notice?: Notice) => void;
  /** Fetches the page again, after a change. */
  reload: () => void;
}

/** A button of a row, optionally asking in the row first. */
export interface RowAction {
  key: string;
  /** What the button says: `End sessions`. */
  text: string;
  /** Its accessible name, naming the record: `End sessions of Ada`. */
  label: string;
  danger?: boolean;
  /**
   * Ask first: the question, the button that answers yes, and the name of
   * the group; with `input`, the answer also takes a value (a new password).
   */
  confirm?: { question: string; yes: string; name: string; input?: RowInput };
  /**
   * Does it, with the value typed when the question has an input. A promise
   * keeps the row's buttons busy until it settles; it resolves true when the
   * row goes away (then they stay busy until it has). It reports its own
   * failures (with `notify`) and never rejects.
   */
  run: (value?: string) => void | Promise<boolean | void>;
}

/** A value a row action asks for with its question (typed unseen, like a password). */
export interface RowInput {
  label: string;
  /** Checked before the action runs: the message when the value will not do. */
  check?: (value: string) => string | undefined;
}

/** A failed call as an alert: what did not happen, the server's detail (and field messages), its hint. */
export function problemNotice(what: string, failure: unknown): Notice {
  const problem = failure instanceof ApiError ? failure.problem : undefined;
  if (!problem) return { kind: 'alert', text: `${what}: ${String(failure)}` };
  const fields = (problem.errors ?? [])
    .map(({ path, message }) => `${path.replace(/^(body|query|params)\./, '')} ${message}`.trim())
    .join('; ');
  return {
    kind: 'alert',
    text: `${what}: ${problem.detail || problem.title}${fields ? ` (${fields})` : ''}`,
    ...(problem.hint ? { hint: problem.hint } : {}),
  };
}
