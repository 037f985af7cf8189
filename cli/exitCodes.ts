/** Exit codes of every passk command. */
export const EXIT = {
  /** Success (and, for `gate`, a passing verdict). */
  ok: 0,
  /** A gate verdict of fail, a check that found a problem, or a run that stopped before its last trial. */
  failed: 1,
  /** Bad input: a flag, a config value, or a line of an input file (the message names file, line and field). */
  usage: 2,
  /** A backend (event log, store) could not be reached or is held by another process. */
  unavailable: 3,
  /** An unexpected error (a bug: please report it with the stack trace). */
  error: 4,
  /** `gate --declare --wait` ran out of time before the processors decided (`passk gate --status` says why). */
  undecided: 5,
} as const;
