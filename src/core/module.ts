import type { CollectionDefinition } from '../storage/collection.js';
import type { ChannelDefinition } from './channel.js';
import type { RouteDefinition } from './route.js';

export interface ModuleDefinition {
  /** Names the module in logs and groups its routes in the API reference. */
  name: string;
  description?: string;
  /** Collections this module stores; they are migrated at start. */
  collections?: CollectionDefinition<any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  routes: RouteDefinition<any, any, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Realtime channels this module serves. */
  channels?: ChannelDefinition[];
}

/**
 * Declares a module: a named group of routes and the collections they store.
 *
 * @example
 * export const hello = defineModule({
 *   name: 'hello',
 *   routes: [defineRoute({ method: 'GET', path: '/hello', summary: 'Says hello', handler: () => ({ hello: 'world' }) })],
 * })
 */
export function defineModule(module: ModuleDefinition): ModuleDefinition {
  if (!/^[a-z][a-z0-9-]*$/.test(module.name)) {
    throw new Error(`module name "${module.name}" must be lower-case letters, digits and dashes`);
  }
  return module;
}
