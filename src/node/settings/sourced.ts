/** A setting's value and where it came from (`PORT in .env`, `the default`). */
export interface Sourced<T> {
  value: T;
  source: string;
}
