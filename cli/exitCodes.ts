/** Exit codes of every passk command. */
export const EXIT = {
  /** Success (and, for `gate`, a passing verdict). */
  ok: 0,
  /** A gate verdict of fail, or a check that found a problem. */
  failed: 1,
  /** Bad input: a flag, a config value, or a line of an input file (the message names file, line and field). */
  usage: 2,
  /** A backend (event log, store) could not be reached or is held by another process. */
  unavailable: 3,
  /** An unexpected error (a bug: please report it with the stack trace). */
  error: 4,
} as const;
