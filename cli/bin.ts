#!/usr/bin/env node
// The passk command of the published package (compiled to dist/cli/bin.js). In the repository,
// bin/passk.mjs runs the TypeScript sources through tsx instead, with no build step.
await import('./main.ts');
