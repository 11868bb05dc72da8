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
  const instances = new WeakMap<object, T>();
  return {
    name,
    of(given) {
      // A caller's copy of the services (its own storage) counts as the app's: one instance per app, made
      // from the app's services, never from a caller's.
      const services = appServicesOf.get(given) ?? given;
      if (!instances.has(services)) instances.set(services, create(services));
      return instances.get(services)!;
    },
  };
}

/** The app's services of each caller's copy of them. */
const appServicesOf = new WeakMap<AppServices, AppServices>();

/** Says that `scoped` (a caller's copy, with that caller's storage) belongs to the app whose services are `app`. */
export function scopedServices(app: AppServices, scoped: AppServices): AppServices {
  appServicesOf.set(scoped, app);
  return scoped;
}
