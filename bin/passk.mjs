#!/usr/bin/env node
// The passk command (package.json "bin"). In a checkout it runs the TypeScript sources through tsx's loader, so there
// is no build step and no stale build; the installed package ships dist/ and no sources, so there it runs the
// compiled dist/cli/main.js.
import { existsSync } from 'node:fs';

// SIGTERM and SIGINT are held until the command decides what they mean (cli/signals.ts): loading the sources takes
// seconds on a busy machine, and a signal then would otherwise end the process with no exit code and no word.
const held = {
  pending: undefined,
  release() {
    process.off('SIGTERM', hold);
    process.off('SIGINT', hold);
  },
};
function hold(signal) {
  held.pending ??= signal;
}
process.on('SIGTERM', hold);
process.on('SIGINT', hold);
globalThis[Symbol.for('passk.earlySignals')] = held;

const source = new URL('../cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
