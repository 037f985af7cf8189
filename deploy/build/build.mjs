// `npm run build`: compiles the TypeScript sources to dist/ (ESM JavaScript, .d.ts, source maps) with
// tsconfig.build.json, then copies the files the code reads at run time (the dashboard's web assets,
// the module agent's worker, the demo's dataset) and bundles the dashboard's views with esbuild: the
// installed package serves one minified `app.js` (with its source map) where a checkout serves the
// ES modules of web/client as they are.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ASSETS } from './assets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
for (const a of ASSETS) {
  mkdirSync(dirname(join(dist, a)), { recursive: true });
  cpSync(join(root, a), join(dist, a), { recursive: true });
}
// The views, bundled: one request instead of fifteen, minified. uPlot stays the file the server serves from
// node_modules (web/staticFiles.ts), so it is external. The sources go (view.d.ts: JSDoc types, never served).
const client = join(dist, 'web', 'client');
for (const f of readdirSync(client, { recursive: true, withFileTypes: true }))
  if (f.isFile() && /\.(js|json|d\.ts)$/.test(f.name)) rmSync(join(f.parentPath, f.name));
for (const d of readdirSync(client, { withFileTypes: true }))
  if (d.isDirectory()) rmSync(join(client, d.name), { recursive: true });
await build({
  entryPoints: [join(root, 'web', 'client', 'app.js')],
  outfile: join(client, 'app.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  external: ['/vendor/*'],
  logLevel: 'warning',
});
process.stderr.write(`passk: built ${dist}\n`);
