// `npm run build`: compiles the TypeScript sources to dist/ (ESM JavaScript, .d.ts, source maps) with
// tsconfig.build.json, then copies the files the code reads at run time (the dashboard's web assets,
// the module agent's worker, the demo's dataset).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');
const ASSETS = [
  'web/client',
  'producers/otlp/proto',
  'producers/runner/agents/moduleWorker.mjs',
  'demo/dataset/refund-review.jsonl',
];

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
for (const a of ASSETS) {
  mkdirSync(dirname(join(dist, a)), { recursive: true });
  cpSync(join(root, a), join(dist, a), { recursive: true });
}
process.stderr.write(`passk: built ${dist}\n`);
