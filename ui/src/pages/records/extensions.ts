import type { Collection } from '../../collections.js';
import { sessionActions, userActions } from './account-actions.js';
import type { RecordActions } from './record-actions.js';

/**
 * The collections with extras in the data browser, by name. Each decides
 * from the collection's description whether it applies (a project's own
 * `users` without Berth's accounts gets the plain browser).
 */
const extensions: Record<
  string,
  (collection: Collection, collections: Collection[]) => RecordActions | undefined
> = {
  users: userActions,
  sessions: sessionActions,
};

/** The extras of a collection; none for most. */
export const recordActionsOf = (collection: Collection, collections: Collection[]): RecordActions =>
  (Object.hasOwn(extensions, collection.name) && extensions[collection.name]!(collection, collections)) || {};
