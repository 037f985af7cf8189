// A stop signal that arrives while passk still holds it but is dispatched only after the command took over (the main
// thread was busy in synchronous code): run with `node --import tsx`. Prints "heard" when the command's own listener
// gets it, "lost" when nobody does (the fault campaign's `passk process` that ignored its SIGTERM for good).
import { holdStopSignals } from '../../bin/earlySignals.mjs';
import { takeEarlySignal } from '../../cli/signals.ts';

holdStopSignals();
// sent now, dispatched to JavaScript only when the event loop next turns, after the synchronous code below
process.kill(process.pid, 'SIGTERM');
const early = takeEarlySignal(); // what `passk process` does before installing its own handlers
process.on('SIGTERM', () => {
  process.stdout.write(`heard (held before the take-over: ${early ?? 'none'})\n`);
  process.exit(0);
});
setTimeout(() => {
  process.stdout.write('lost\n');
  process.exit(1);
}, 10_000);
