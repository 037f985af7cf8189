/**
 * Stop signals that arrive while passk starts. bin/passk.mjs holds SIGTERM and SIGINT from its first line
 * (bin/earlySignals.mjs): loading the sources takes seconds on a busy machine, and a signal then would end the process
 * by the default action (no exit code, no word), although it had done nothing yet. The command decides what a held
 * signal means:
 * - a long-running command that stops cleanly on a signal (`passk process`) takes it over with `takeEarlySignal()`
 *   before it starts work, installing its own handlers, and stops at once if a signal already came;
 * - every other command releases the hold as its action begins (`releaseEarlySignals`, the program's preAction hook):
 *   one that runs until stopped (`serve`, `ingest`, `demo`, `run --follow`) exits 0 for a signal that came while it
 *   loaded, as it does
 *   for one that comes later; any other exits 128 + the signal's number, as a shell reports a process a signal ended.
 * Released, the hold's listener stays: it stands aside while the command listens for a signal itself and exits
 * 128 + its number otherwise. Removing it would close Node's signal handle and drop a signal that had arrived but was
 * not yet dispatched: the command would never hear it.
 */
type Held = { pending?: NodeJS.Signals; release(exitCode?: number): void };
const KEY = Symbol.for('passk.earlySignals');
const held = (): Held | undefined => (globalThis as Record<symbol, Held | undefined>)[KEY];

/**
 * The signal held while passk started, if any; the hold is released (install your own handlers now). A later signal
 * that no handler of the command's hears ends the process with `exitCode` (default 128 + the signal's number).
 */
export const takeEarlySignal = (exitCode?: number): NodeJS.Signals | undefined => {
  const h = held();
  if (!h) return undefined;
  h.release(exitCode);
  delete (globalThis as Record<symbol, Held | undefined>)[KEY];
  return h.pending;
};

/** Commands that run until stopped by a signal: stopped early, they exit 0, as when stopped later. */
const UNTIL_STOPPED = new Set(['serve', 'ingest', 'demo']);
/** Commands that take the held signal over themselves (`takeEarlySignal`). */
const TAKE_OVER = new Set(['process']);

/**
 * Releases the hold as a command's action begins; ends the process when a signal came while it started. `following`:
 * the command was asked to run until stopped (`run --follow`).
 */
export const releaseEarlySignals = (command: string, following = false): void => {
  if (TAKE_OVER.has(command)) return;
  const quiet = following || UNTIL_STOPPED.has(command);
  const signal = takeEarlySignal(quiet ? 0 : undefined);
  if (!signal) return;
  process.exit(quiet ? 0 : 128 + (signal === 'SIGINT' ? 2 : 15));
};
