/** A service manager failure the user can act on, said in one line; the CLI prints it without a stack. */
export class ServiceError extends Error {
  override name = 'ServiceError';
}
