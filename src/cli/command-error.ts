/** A failure the user can fix; printed as one line without a stack. */
export class CommandError extends Error {
  override name = 'CommandError';
}
