import type { Authenticator } from './caller.js';
import type { ChannelDefinition } from './channel.js';
import type { CollectionDefinition } from './collection.js';
import { defineErrors, type ErrorEntry } from './errors.js';
import type { Hooks } from './hooks.js';
import type { ModuleSettings } from './module-settings.js';
import type { RouteDefinition } from './route.js';

export interface ModuleDefinition {
  /** Names the module in logs, groups its routes in the API reference, and holds its settings in the config file. */
  name: string;
  description?: string;
  /**
   * Collections this module stores; they are migrated at start, and each
   * gets its REST resource (the operations it declares) and change events.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- collections of any fields
  collections?: CollectionDefinition<any>[];
  /** Routes of its own; one with the method and path of a resource operation answers it instead. */
  routes?: RouteDefinition<any, any, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Realtime channels this module serves. */
  channels?: ChannelDefinition[];
  /** Request hooks, write hooks per collection, start and close. */
  hooks?: Hooks;
  /** Who requests are, from their bearer tokens (asked after the app's own). */
  authenticators?: Authenticator[];
  /** Error codes of its own: status, title and hint each. */
  errors?: Record<string, ErrorEntry>;
  /** Its settings (`defineSettings`), read under its name in berth.config.json. */
  settings?: ModuleSettings<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Declares a module: a named group of collections, routes, channels and
 * hooks.
 *
 * @example
 * export const notesModule = defineModule({
 *   name: 'notes',
 *   collections: [notes],
 *   routes: [defineRoute({ method: 'GET', path: '/notes-count', summary: 'Counts notes', handler: … })],
 * })
 */
export function defineModule(module: ModuleDefinition): ModuleDefinition {
  if (!/^[a-z][a-z0-9-]*$/.test(module.name)) {
    throw new Error(`module name "${module.name}" must be lower-case letters, digits and dashes`);
  }
  if (module.settings && module.settings.module !== module.name) {
    throw new Error(
      `module "${module.name}" has the settings of "${module.settings.module}": declare them with defineSettings('${module.name}', …)`,
    );
  }
  if (module.errors) defineErrors(module.errors);
  return module;
}
