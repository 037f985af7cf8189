/**
 * Stop signals that arrive while passk starts. bin/passk.mjs holds SIGTERM and SIGINT from its first line: loading the
 * sources takes seconds on a busy machine, and a signal then would end the process by the default action (no exit
 * code, no word), although it had done nothing yet. The command decides what a held signal means:
 * - a long-running command that stops cleanly on a signal (`passk process`) takes it over with `takeEarlySignal()`
 *   before it starts work, installing its own handlers, and stops at once if a signal already came;
 * - every other command releases the hold as its action begins (`releaseEarlySignals`, the program's preAction hook):
 *   one that runs until stopped (`serve`, `ingest`, `demo`) exits 0 for a signal that came while it loaded, as it does
 *   for one that comes later; any other exits 128 + the signal's number, as a shell reports a process a signal ended.
 */
type Held = { pending?: NodeJS.Signals; release(): void };
const KEY = Symbol.for('passk.earlySignals');
const held = (): Held | undefined => (globalThis as Record<symbol, Held | undefined>)[KEY];

/** The signal held while passk started, if any; the hold is released (install your own handlers now). */
export const takeEarlySignal = (): NodeJS.Signals | undefined => {
  const h = held();
  if (!h) return undefined;
  h.release();
  delete (globalThis as Record<symbol, Held | undefined>)[KEY];
  return h.pending;
};

/** Commands that run until stopped by a signal: stopped early, they exit 0, as when stopped later. */
const UNTIL_STOPPED = new Set(['serve', 'ingest', 'demo']);
/** Commands that take the held signal over themselves (`takeEarlySignal`). */
const TAKE_OVER = new Set(['process']);

/** Releases the hold as a command's action begins; ends the process when a signal came while it started. */
export const releaseEarlySignals = (command: string): void => {
  if (TAKE_OVER.has(command)) return;
  const signal = takeEarlySignal();
  if (!signal) return;
  process.exit(UNTIL_STOPPED.has(command) ? 0 : 128 + (signal === 'SIGINT' ? 2 : 15));
};
