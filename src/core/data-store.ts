import type { CollectionDefinition, Fields, RecordOf } from './collection.js';
import { BerthError, type FieldError } from './errors.js';
import { createValues, validated, type ImportedRecord } from './create-values.js';
import type { ChangeEvent, EventBus } from './events.js';
import type { Caller } from './caller.js';
import type { CollectionHooks, WriteContext } from './hooks.js';
import type { ResolvedSettings } from './module-settings.js';
import { promised, type Eventually } from './eventually.js';
import { newRecordId } from './record-id.js';
import type {
  DriverRepository,
  DriverScope,
  ListQuery,
  ListResult,
  Repository,
  Row,
  Storage,
  StorageDriver,
  LoadOptions,
  LoadRecord,
  Transaction,
  LoggedWrites,
  WriteMeta,
} from './storage.js';

export interface DataStoreOptions {
  /** Where change events go (the realtime layer listens there). */
  events?: EventBus;
  /** Every collection of the app: references are checked against them. */
  collections: readonly CollectionDefinition[];
  /** The write hooks of each collection, in the order they run. */
  hooks?: ReadonlyMap<string, readonly CollectionHooks[]>;
}

/** A repository's reads as its driver answers them: at once when it can. */
interface Reads {
  list(query: ListQuery): Eventually<ListResult<Row>>;
  get(id: string): Eventually<Row | undefined>;
  /**
   * Whether a read answers only what storage holds (no code of the app's runs on it): the kept-lists cache
   * keeps answers only then. The data layer says so per collection; a repository made elsewhere (a test's
   * stand-in) is never taken for pure. A hook that runs on reads must make it false for its collection.
   */
  pure: boolean;
  /** The driver's `readsVersion`, when it has one. */
  readsVersion?(): object | undefined;
}

const readsKey = Symbol('reads at once');

/** A repository's way to store a record an import validated (`Storage.load`). */
type Store = (given: ImportedRecord, withHooks: boolean) => Promise<unknown>;
const storeKey = Symbol('stores a validated record');

/**
 * A repository's reads without a promise when the driver answers at once
 * (SQLite, IndexedDB's loaded copy): what Berth's own routes read with. A
 * repository made elsewhere (a test's stand-in) reads through its own methods.
 *
 * @example
 * const found = readsOf(services.storage.repository(books)).get(id) // a row, or a promise of one
 */
export const readsOf = (repository: Repository): Reads =>
  (repository as Repository & { [readsKey]?: Reads })[readsKey] ?? {
    pure: false,
    list: (query) => repository.list(query) as Eventually<ListResult<Row>>,
    get: (id) => repository.get(id) as Eventually<Row | undefined>,
  };

/** A record of a collection with this many fields, as the data layer handles it. */
type AnyRecord = RecordOf<Fields>;

/** Who references whom: for each collection, the fields of other collections that point into it. */
function referencesInto(collections: readonly CollectionDefinition[]) {
  const into = new Map<
    string,
    Array<{ collection: CollectionDefinition; field: string; onDelete: string }>
  >();
  for (const collection of collections) {
    for (const [field, definition] of Object.entries(collection.fields)) {
      if (definition.kind !== 'reference' || !definition.references) continue;
      const list = into.get(definition.references) ?? [];
      list.push({ collection, field, onDelete: definition.onDelete ?? 'restrict' });
      into.set(definition.references, list);
    }
  }
  return into;
}

/**
 * The data layer: turns a storage driver into the `Storage` modules use.
 * Every write, whatever makes it, is validated with the collection's own
 * schema (no coercion: `42` for a text field is a 422), gets its defaults,
 * id and timestamps, has its references checked (a missing record is a 422;
 * deleting a referenced one is a 409 unless the field says cascade or
 * set-null), runs the collection's hooks and emits exactly one change event
 * per record it changes — after the transaction commits. A write that needs
 * more than one statement (references, hooks, cascades) runs in a
 * transaction of its own.
 *
 * @example
 * const storage = createDataStore(openSqliteStorage(':memory:'), { collections, events })
 * await storage.repository(notes).create({ title: 'Hello' })
 */
/** What a storage's write hooks see besides the write: the settings, and who writes. */
interface Bound {
  settings: ReadonlyMap<string, ResolvedSettings> | undefined;
  caller: Caller | undefined;
  /** The client's id for the write (its `x-mutation-id`), for the log. */
  mutationId?: string | undefined;
}

export function createDataStore(driver: StorageDriver, options: DataStoreOptions): Storage {
  const { events } = options;
  const byName = new Map(options.collections.map((collection) => [collection.name, collection]));
  const into = referencesInto(options.collections);
  const hooksOf = (name: string): readonly CollectionHooks[] => options.hooks?.get(name) ?? [];
  // Every write appends its change to the driver's log, in its own transaction.
  const logged = driver.changes !== undefined;

  /** One set of repositories over a driver scope, collecting the events of its writes. */
  class Scope implements Transaction {
    readonly #scope: DriverScope;
    readonly #pending: ChangeEvent[] | undefined;
    readonly #repositories = new Map<string, Repository<Fields>>();

    readonly settings: ReadonlyMap<string, ResolvedSettings> | undefined;
    readonly caller: Caller | undefined;
    readonly mutationId: string | undefined;

    constructor(scope: DriverScope, pending: ChangeEvent[] | undefined, bound: Bound) {
      this.#scope = scope;
      this.#pending = pending;
      this.settings = bound.settings;
      this.caller = bound.caller;
      this.mutationId = bound.mutationId;
    }

    /**
     * Appends the change to the log, in the write's transaction, where the
     * driver keeps one; emits its event (with its seq) now outside a
     * transaction, or once it commits inside one.
     */
    async emit(event: ChangeEvent): Promise<void> {
      if (this.#scope.appendChange) {
        event.seq = await this.#scope.appendChange({
          collection: event.topic,
          id: event.record.id,
          action: event.action,
          record: event.record as Record<string, unknown>,
          ...this.meta,
        });
      }
      this.publish(event);
    }

    /** Who writes, and the client's id for the write, as a change keeps them. */
    get meta(): WriteMeta {
      const { caller } = this;
      return { actor: caller ? `${caller.via}:${caller.id}` : null, mutationId: this.mutationId ?? null };
    }

    /** Emits an event whose change is in the log already: now outside a transaction, once it commits inside one. */
    publish(event: ChangeEvent): void {
      if (this.#pending) this.#pending.push(event);
      else events?.publish(event);
    }

    get inTransaction(): boolean {
      return this.#pending !== undefined;
    }

    driverRepository(collection: CollectionDefinition): DriverRepository {
      return this.#scope.repository(collection);
    }

    repository<F extends Fields>(collection: CollectionDefinition<F>): Repository<F> {
      let repository = this.#repositories.get(collection.name);
      if (!repository) {
        repository = createRepository(this, collection as unknown as CollectionDefinition);
        this.#repositories.set(collection.name, repository);
      }
      return repository as unknown as Repository<F>;
    }
  }

  /** Runs `work` in a transaction of its own, unless `scope` is in one already. */
  const transactional = <R>(scope: Scope, work: (scope: Scope) => Promise<R>): Promise<R> =>
    scope.inTransaction ? work(scope) : runTransaction(work, scope);

  async function runTransaction<R>(work: (scope: Scope) => Promise<R>, bound: Bound): Promise<R> {
    const pending: ChangeEvent[] = [];
    const result = await driver.transaction((driverScope) => work(new Scope(driverScope, pending, bound)));
    for (const event of pending) events?.publish(event);
    return result;
  }

  function createRepository(scope: Scope, collection: CollectionDefinition): Repository<Fields> {
    const { name, fields } = collection;
    const raw = (): DriverRepository => scope.driverRepository(collection);
    const hooks = hooksOf(name);
    const references = Object.entries(fields).filter(([, definition]) => definition.kind === 'reference');
    const referencing = into.get(name) ?? [];
    const context = (tx: Scope): WriteContext => ({
      collection: name,
      tx,
      ...(tx.settings ? { settings: tx.settings } : {}),
      ...(tx.caller ? { caller: tx.caller } : {}),
    });
    // A write alone in its statement needs no transaction of its own (unless its change goes to the log too).
    const writesAlone = hooks.length === 0 && references.length === 0;
    const deletesAlone = hooks.length === 0 && referencing.length === 0;
    const simpleWrites = !logged && writesAlone;
    const simpleDeletes = !logged && deletesAlone;
    // With the log, such a write appends its change in its own statement, where the driver can: one round trip
    // where a transaction takes four. Outside a transaction on every driver that keeps the log; inside one where
    // the driver offers it there too (IndexedDB: the write, its change and its undo in one IndexedDB
    // transaction), its event waiting for the commit as any other of the transaction's.
    const loggedWhen = (alone: boolean): DriverRepository['logged'] =>
      logged && alone ? raw().logged : undefined;

    const insertLogged = async (writes: LoggedWrites, input: unknown): Promise<AnyRecord> => {
      const values = createValues(collection, input);
      const now = new Date().toISOString();
      const row = { id: newRecordId(), ...values, createdAt: now, updatedAt: now } as Row;
      const { record, seq } = await writes.insert(row, scope.meta);
      scope.publish({ topic: name, action: 'created', record: collection.present(record as AnyRecord), seq });
      return record as AnyRecord;
    };
    const changeLogged = async (
      writes: LoggedWrites,
      id: string,
      input: unknown,
    ): Promise<AnyRecord | undefined> => {
      const patch = validated(collection.schemas.patch, input, name) as Record<string, unknown>;
      const written = await writes.update(id, { ...patch, updatedAt: new Date().toISOString() }, scope.meta);
      if (!written) return undefined;
      const record = written.record as AnyRecord;
      scope.publish({ topic: name, action: 'updated', record: collection.present(record), seq: written.seq });
      return record;
    };
    const removeLogged = async (writes: LoggedWrites, id: string): Promise<boolean> => {
      const written = await writes.delete(id, scope.meta);
      if (!written) return false;
      const record = written.record as AnyRecord;
      scope.publish({ topic: name, action: 'deleted', record: collection.present(record), seq: written.seq });
      return true;
    };

    const checkReferences = async (tx: Scope, values: Record<string, unknown>): Promise<void> => {
      const errors: FieldError[] = [];
      for (const [field, definition] of references) {
        const id = values[field];
        if (id === undefined || id === null) continue;
        const target = byName.get(definition.references!);
        if (!target)
          throw new Error(`${name}.${field} references "${definition.references}", which no module declares`);
        if (!(await tx.driverRepository(target).get(String(id)))) {
          errors.push({ path: field, message: `no ${target.name} record has the id "${String(id)}"` });
        }
      }
      if (errors.length) {
        throw new BerthError(
          'BERTH_VALIDATION_FAILED',
          `the ${name} record names records that do not exist`,
          {
            errors,
          },
        );
      }
    };

    // Async: a refusal is a rejected promise, never a throw at the call.
    const insert = async (tx: Scope, input: unknown): Promise<AnyRecord> =>
      store(tx, { values: createValues(collection, input) }, true);

    /** Stores values a create validated (with an import's id and timestamps), with or without the hooks and event. */
    const store = async (tx: Scope, given: ImportedRecord, withHooks: boolean): Promise<AnyRecord> => {
      const { values } = given;
      const writeHooks = withHooks ? hooks : [];
      for (const hook of writeHooks) {
        const changed = await hook.beforeCreate?.(values as never, context(tx));
        if (changed) Object.assign(values, changed);
      }
      if (writeHooks.some((hook) => hook.beforeCreate)) validated(collection.schemas.write, values, name);
      await checkReferences(tx, values);
      const now = given.createdAt === undefined ? new Date().toISOString() : undefined;
      const row = {
        id: given.id ?? newRecordId(),
        ...values,
        createdAt: given.createdAt ?? now,
        updatedAt: given.updatedAt ?? now,
      } as Row;
      const record = (await tx.driverRepository(collection).insert(row)) as AnyRecord;
      for (const hook of writeHooks) await hook.afterCreate?.(record, context(tx));
      if (withHooks) await tx.emit({ topic: name, action: 'created', record: collection.present(record) });
      return record;
    };

    const change = async (tx: Scope, id: string, input: unknown): Promise<AnyRecord | undefined> => {
      const patch = validated(collection.schemas.patch, input, name) as Record<string, unknown>;
      const previous =
        hooks.length || references.length
          ? ((await tx.driverRepository(collection).get(id)) as AnyRecord | undefined)
          : undefined;
      if ((hooks.length || references.length) && !previous) return undefined;
      for (const hook of hooks) {
        const changed = await hook.beforeUpdate?.(patch as never, previous!, context(tx));
        if (changed) Object.assign(patch, changed);
      }
      if (hooks.some((hook) => hook.beforeUpdate)) validated(collection.schemas.patch, patch, name);
      await checkReferences(tx, patch);
      const record = (await tx.driverRepository(collection).update(id, {
        ...patch,
        updatedAt: new Date().toISOString(),
      })) as AnyRecord | undefined;
      if (!record) return undefined;
      for (const hook of hooks) await hook.afterUpdate?.(record, previous ?? record, context(tx));
      await tx.emit({ topic: name, action: 'updated', record: collection.present(record) });
      return record;
    };

    const remove = async (tx: Scope, id: string): Promise<boolean> => {
      const record = (await tx.driverRepository(collection).get(id)) as AnyRecord | undefined;
      if (!record) return false;
      for (const hook of hooks) await hook.beforeDelete?.(record, context(tx));
      for (const { collection: other, field, onDelete } of referencing) {
        const count = await tx.driverRepository(other).count(field, id);
        if (count === 0) continue;
        if (onDelete === 'restrict') {
          throw new BerthError(
            'BERTH_CONFLICT',
            `${count} ${other.name} record${count === 1 ? '' : 's'} reference${count === 1 ? 's' : ''} this ${name} record (${other.name}.${field}): delete or change ${count === 1 ? 'it' : 'them'} first`,
            // How to change the declaration is for the app's developer, not for the API's client.
            {
              hint: `Delete or change the ${other.name} records that reference it, then delete it.`,
              developerHint: `Or declare ${other.name}.${field} with onDelete: 'cascade' (or 'set-null').`,
            },
          );
        }
        // Through the data layer, record by record: their hooks run and each emits its own event.
        const { items } = await tx.driverRepository(other).list({
          where: [{ field, op: 'eq', value: id }],
          limit: count,
        });
        const repository = tx.repository(other);
        for (const item of items) {
          if (onDelete === 'cascade') await repository.delete(item.id);
          else await repository.update(item.id, { [field]: null } as never);
        }
      }
      if (!(await tx.driverRepository(collection).delete(id))) return false;
      for (const hook of hooks) await hook.afterDelete?.(record, context(tx));
      await tx.emit({ topic: name, action: 'deleted', record: collection.present(record) });
      return true;
    };

    const reads: Reads = {
      // Collection hooks run on writes only: no code of the app's runs on a read.
      pure: true,
      list: (query) => raw().list(query),
      get: (id) => raw().get(id),
    };
    // Only a driver that keeps a version has one to ask for (SQL drivers do not: nothing to call per list);
    // anything but an object, against the contract (a driver in JavaScript could answer it), is none.
    if (raw().readsVersion) {
      reads.readsVersion = () => {
        const version = raw().readsVersion!();
        return typeof version === 'object' && version !== null ? version : undefined;
      };
    }
    const repository: Repository & { [readsKey]: Reads; [storeKey]: Store } = {
      list: (query: ListQuery) => promised(() => reads.list(query)) as Promise<ListResult<AnyRecord>>,
      get: (id) => promised(() => reads.get(id)) as Promise<AnyRecord | undefined>,
      [readsKey]: reads,
      [storeKey]: (given, withHooks) => store(scope, given, withHooks),
      create: (values) => {
        if (simpleWrites) return insert(scope, values);
        const writes = loggedWhen(writesAlone);
        return writes ? insertLogged(writes, values) : transactional(scope, (tx) => insert(tx, values));
      },
      update: (id, patch) => {
        if (simpleWrites) return change(scope, id, patch);
        const writes = loggedWhen(writesAlone);
        return writes ? changeLogged(writes, id, patch) : transactional(scope, (tx) => change(tx, id, patch));
      },
      delete: (id) => {
        if (simpleDeletes) return remove(scope, id);
        const writes = loggedWhen(deletesAlone);
        return writes ? removeLogged(writes, id) : transactional(scope, (tx) => remove(tx, id));
      },
    };
    return repository;
  }

  /** `Storage.load`: one transaction (the driver's bulk path), each record alone in an attempt. */
  async function load<R>(
    collection: CollectionDefinition,
    work: (add: LoadRecord) => Promise<R>,
    options: LoadOptions,
    bound: Bound,
  ): Promise<R> {
    const withHooks = options.hooks === true;
    const pending: ChangeEvent[] = [];
    const { hooks: _, ...bulk } = options;
    const run = async (driverScope: DriverScope): Promise<R> => {
      const tx = new Scope(driverScope, pending, bound);
      const store = (tx.repository(collection) as unknown as { [storeKey]: Store })[storeKey];
      const attempt = <T>(write: () => Promise<T>): Promise<T> =>
        driverScope.attempt ? driverScope.attempt(write) : write();
      const result = await work(async (record) => {
        const before = pending.length;
        try {
          await attempt(() => store(record, withHooks));
          stored = true;
        } catch (error) {
          pending.length = before; // what the hooks wrote for it is undone: so are their events
          throw error;
        }
      });
      // Records in without their changes: the log is cut in the same transaction, so a subscriber
      // resuming from before is told to read again, from the moment they are there.
      if (stored && !withHooks && driverScope.cutChanges) {
        await driverScope.cutChanges(collection.name);
        cut = true;
      }
      return result;
    };
    let stored = false;
    let cut = false;
    const result = driver.bulkInsert
      ? await driver.bulkInsert(collection, run, bulk)
      : await driver.transaction(run);
    // A driver whose transaction cannot cut its log (IndexedDB) cuts it once the records are in.
    if (stored && !withHooks && !cut && driver.changes?.cut) await driver.changes.cut(collection.name);
    for (const event of pending) events?.publish(event);
    return result;
  }

  const storageWith = (bound: Bound): Storage => {
    const outside = new Scope(driver, undefined, bound);
    return {
      driver: driver.driver,
      location: driver.location,
      ...(driver.textOrder ? { textOrder: driver.textOrder } : {}),
      repository: (collection) => outside.repository(collection),
      transaction: (work) => runTransaction((tx) => work(tx), bound),
      load: (collection, work, options) => load(collection, work, options ?? {}, bound),
      withSettings: (settings) => storageWith({ ...bound, settings }),
      as: (caller) => storageWith({ ...bound, caller }),
      withMutation: (mutationId) => storageWith({ ...bound, mutationId }),
      async migrate(collections, onStep, migrateOptions) {
        const { created } = await driver.migrate(collections, onStep);
        // Seeds go through the data layer: validated, with defaults, ids and timestamps.
        for (const name of created) {
          if (migrateOptions?.unseeded?.includes(name)) continue;
          const collection = byName.get(name) ?? collections.find((each) => each.name === name)!;
          const seed = collection.seed?.() ?? [];
          if (seed.length === 0) continue;
          await runTransaction(async (tx) => {
            for (const values of seed) await tx.repository(collection).create(values as never);
          }, bound);
          onStep?.({ collection: name, action: 'seed', detail: `${seed.length} records` });
        }
      },
      ...(driver.stats ? { stats: () => driver.stats!() } : {}),
      ...(driver.ping ? { ping: () => driver.ping!() } : {}),
      ...(driver.identity ? { identity: () => driver.identity!() } : {}),
      ...(driver.backup ? { backup: (file, onProgress) => driver.backup!(file, onProgress) } : {}),
      ...(driver.changes ? { changes: driver.changes } : {}),
      close: () => driver.close(),
    };
  };
  return storageWith({ settings: undefined, caller: undefined });
}
