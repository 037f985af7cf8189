#!/usr/bin/env node
// The passk command (package.json "bin"). In a checkout it runs the TypeScript sources through tsx's loader, so there
// is no build step and no stale build; the installed package ships dist/ and no sources, so there it runs the
// compiled dist/cli/main.js. The tests' children run the build of the sources their run made when PASSK_CLI_BUILD
// names it (deploy/test/cliBuild.mjs): the same modules without tsx's loader in every child.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { holdStopSignals } from './earlySignals.mjs';

// SIGTERM and SIGINT are held until the command decides what they mean (bin/earlySignals.mjs, cli/signals.ts).
holdStopSignals();

const source = new URL('../cli/main.ts', import.meta.url);
if (existsSync(source) && process.env.PASSK_CLI_BUILD) {
  await import(pathToFileURL(join(process.env.PASSK_CLI_BUILD, 'cli', 'main.js')).href);
} else if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
