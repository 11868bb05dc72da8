import type { AppServices } from './route.js';

/** A module's own service (a mailer, a client of another API): made once per running app, typed where it is used. */
export interface ServiceDefinition<T> {
  readonly name: string;
  /** The instance for this running app, made on first use. */
  of(services: AppServices): T;
}

/**
 * Declares a service a module's routes and hooks share. It is made on first
 * use from the app's services (settings, logger, storage) and kept for as
 * long as that app instance serves (a reload makes a new one).
 *
 * @example
 * export const mailer = defineService('mailer', (services) => createMailer(mailSettings.of(services)))
 * handler: ({ services }) => mailer.of(services).send(...)
 */
export function defineService<T>(name: string, create: (services: AppServices) => T): ServiceDefinition<T> {
  // Keyed on the services object, which an app instance makes once: one instance per running app.
  const instances = new WeakMap<AppServices, T>();
  return {
    name,
    of(services) {
      if (!instances.has(services)) instances.set(services, create(services));
      return instances.get(services)!;
    },
  };
}
