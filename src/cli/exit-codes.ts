/** The exit codes of every Berth binary. */
export const exitCodes = {
  ok: 0,
  /** Start-up or runtime failure: bad configuration, port in use, a command that failed. */
  failure: 1,
  /** The command line itself was wrong: unknown command or option. */
  usage: 2,
} as const;
