import type { AppContext } from './app-life.js';
import type { Caller } from './caller.js';
import type { CollectionDefinition, CreateInput, Fields, RecordOf, UpdateInput } from './collection.js';
import type { ResolvedSettings } from './module-settings.js';
import type { Transaction } from './storage.js';

/** What a write hook knows: the transaction the write runs in, and the app's settings. */
export interface WriteContext {
  collection: string;
  /** Reads and writes in the same transaction as this write. */
  tx: Transaction;
  /** Modules' settings, for `defineSettings(...).of(context)`. */
  settings?: ReadonlyMap<string, ResolvedSettings>;
  /** Who writes, when the write comes from a request with a caller (resource routes, the batch entry). */
  caller?: Caller;
}

/**
 * Hooks around the writes of one collection. They run on every write path
 * (a resource route, the batch entry, another hook, a module's own code) in
 * the write's transaction. A before-hook may change the values (return
 * them, or change them in place) or refuse the write by throwing a
 * `BerthError`; an after-hook sees the stored record.
 */
export interface CollectionHooks<F extends Fields = Fields> {
  beforeCreate?(
    values: CreateInput<F> & Partial<RecordOf<F>>,
    context: WriteContext,
  ): void | Partial<RecordOf<F>> | Promise<void | Partial<RecordOf<F>>>;
  afterCreate?(record: RecordOf<F>, context: WriteContext): void | Promise<void>;
  beforeUpdate?(
    patch: UpdateInput<F>,
    previous: RecordOf<F>,
    context: WriteContext,
  ): void | UpdateInput<F> | Promise<void | UpdateInput<F>>;
  afterUpdate?(record: RecordOf<F>, previous: RecordOf<F>, context: WriteContext): void | Promise<void>;
  beforeDelete?(record: RecordOf<F>, context: WriteContext): void | Promise<void>;
  afterDelete?(record: RecordOf<F>, context: WriteContext): void | Promise<void>;
}

/** Where a request is, for request hooks. */
export interface RequestHookContext {
  request: Request;
  requestId: string;
  /** Values hooks and handlers share for this request (see `Locals`). */
  locals: Locals;
  /** Who sends it, when its bearer token is accepted (undefined for anonymous requests). */
  caller?: Caller;
}

/**
 * Values a request carries from hooks to handlers. Extend it where you set
 * them, and they are typed in every handler:
 *
 * @example
 * declare module 'berth' {
 *   interface Locals { caller?: { id: string } }
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- extended by declaration merging
export interface Locals {}

/**
 * Hooks of an app or a module. Request hooks run for every request, in
 * this order: the app's, then each module's in the order the modules are
 * given; `onResponse` and `onError` the same. Unused, they cost nothing:
 * the request path only has what is declared.
 */
export interface Hooks {
  /** Before routing: return a Response to answer at once (a refusal), or nothing to go on. */
  onRequest?(context: RequestHookContext): void | Response | Promise<void | Response>;
  /** After the handler: return a Response to replace the answer, or nothing to keep it. */
  onResponse?(context: RequestHookContext, response: Response): void | Response | Promise<void | Response>;
  /** When a request fails: see the error (to log or count it); return a Response to answer with. */
  onError?(context: RequestHookContext, error: unknown): void | Response | Promise<void | Response>;
  /** After migrations, before the server listens; `context.services` holds storage, logger, events and settings. */
  onStart?(context: AppContext): void | Promise<void>;
  /** During shutdown, after the last request, before storage closes (Node, the page's `close()`, a test client's). */
  onClose?(context: AppContext): void | Promise<void>;
  /** Write hooks per collection, by collection name. */
  collections?: Record<string, CollectionHooks<Fields>>;
}

/**
 * Write hooks for one collection, typed by its fields.
 *
 * @example
 * hooks: { collections: { ...collectionHooks(tasks, { beforeCreate(values) { values.title = values.title.trim() } }) } }
 */
export function collectionHooks<F extends Fields>(
  collection: CollectionDefinition<F>,
  hooks: CollectionHooks<F>,
): Record<string, CollectionHooks<Fields>> {
  return { [collection.name]: hooks as unknown as CollectionHooks<Fields> };
}
