// The CLI compiled once per test run, for the tests' `node bin/passk.mjs …` children: bin/passk.mjs runs the build
// that PASSK_CLI_BUILD names instead of registering tsx, which costs every child its loader (a hooks thread, a resolve
// and a cache lookup per module, and one more tsx per embedded-log writer thread): ~0.65 s of CPU per `passk report`,
// ~0.4 s per `passk --version` (docs/performance.md, "The tests' CLI build"). Without the variable (a user's checkout)
// bin/passk.mjs runs the sources, so there is never a stale build.
//
// The modules are compiled by esbuild, the compiler tsx itself runs, one output file per source file (the relative
// imports stay imports, `.ts` → `.js`, as tsc's rewriteRelativeImportExtensions does for `npm run build`), in the
// layout of the sources, beside copies of package.json and the files the code reads at run time
// (deploy/build/assets.mjs). The directory is under .reports/ in the checkout, so that packages resolve from its
// node_modules. deploy/test/run.mjs builds once for all its lanes; a vitest project run alone builds in its global
// setup (test/setup/cliBuild.ts). About 2 s of CPU.
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ASSETS } from '../build/assets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Every module of the source directories (tsconfig.build.json's `include`), but the tests and their data: tsc follows
 * the imports into files its `exclude` names (demo/production.ts imports demo/dataset/generate.ts), so this compiles
 * them all rather than repeat which are imported.
 */
const SOURCES = ['cli', 'deploy', 'log', 'processors', 'producers', 'schemas', 'sinks', 'web', 'demo'];
const excluded = (path) => /\.test\.ts$|\.d\.ts$/.test(path) || path.split(sep).includes('testdata');

const sources = () => [
  join(root, 'index.ts'),
  ...SOURCES.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile() && f.name.endsWith('.ts'))
      .map((f) => join(f.parentPath, f.name))
      .filter((f) => !excluded(relative(root, f))),
  ),
];

/** Relative imports stay imports of the compiled file next to this one; packages and node: builtins stay imports. */
const keepImports = {
  name: 'keep-imports',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => ({ path: args.path.replace(/\.ts$/, '.js'), external: true }));
  },
};

/** Whether a process of that id is running (a build of a run that was killed is left behind: its pid is gone). */
const running = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
};

/** Compiles the CLI into a new directory under .reports/ and answers its path; removes the builds of ended runs. */
export const buildCli = async () => {
  const reports = join(root, '.reports');
  for (const d of existsSync(reports) ? readdirSync(reports) : []) {
    const pid = /^cli-build-(\d+)-/.exec(d)?.[1];
    if (pid && !running(Number(pid))) rmSync(join(reports, d), { recursive: true, force: true });
  }
  const out = join(reports, `cli-build-${process.pid}-${Date.now()}`);
  await build({
    entryPoints: sources(),
    outbase: root,
    outdir: out,
    bundle: true,
    packages: 'external',
    plugins: [keepImports],
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  copyFileSync(join(root, 'package.json'), join(out, 'package.json'));
  for (const a of ASSETS) {
    mkdirSync(dirname(join(out, a)), { recursive: true });
    cpSync(join(root, a), join(out, a), { recursive: true });
  }
  return out;
};

export const removeCliBuild = (dir) => rmSync(dir, { recursive: true, force: true });
