// Stop signals while passk starts (cli/signals.ts says what each command makes of them).
//
// SIGTERM and SIGINT are held from the first line: loading the sources takes seconds on a busy machine, and a signal
// then would otherwise end the process by the default action, with no exit code and no word. The hold's listener is
// never removed, only released: removing a signal's last listener closes Node's signal handle, and a signal that had
// arrived but was not yet dispatched (the main thread busy in synchronous code) is dropped with it, so the command's
// own listener, added a moment later, never hears it. That is how a `passk process` of the fault campaign ignored
// its SIGTERM for good. Once released, the hold stands aside while the command listens for the signal itself, and
// otherwise does what the default action means, as a shell reports it: exit 128 + the signal's number.

/** Installs the hold; `globalThis[Symbol.for('passk.earlySignals')]` is how the command finds it. */
export const holdStopSignals = () => {
  const held = {
    /** The first stop signal that came before the release, if any. */
    pending: undefined,
    released: false,
    /** The exit code for a later signal no listener of the command's hears (default 128 + its number). */
    exitCode: undefined,
    release(exitCode) {
      held.released = true;
      held.exitCode = exitCode;
    },
  };
  const hold = (signal) => {
    if (!held.released) {
      held.pending ??= signal;
      return;
    }
    if (process.listenerCount(signal) > 1) return; // the command's own listener acts on it
    process.exit(held.exitCode ?? 128 + (signal === 'SIGINT' ? 2 : 15));
  };
  process.on('SIGTERM', hold);
  process.on('SIGINT', hold);
  globalThis[Symbol.for('passk.earlySignals')] = held;
  return held;
};
