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
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
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

/**
 * This process's pid namespace (`/proc/self/ns/pid`, e.g. `pid:[4026531836]` → 4026531836), 0 where there is none to
 * read (macOS). A checkout shared with a container is built by processes whose pids mean nothing here.
 */
const pidNamespace = () => {
  try {
    return Number(/\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

/** Past this age a build is removed whatever its pid says: no test run lasts a day. */
const STALE_MS = 24 * 3600_000;

/**
 * Whether the build directory `name` (`cli-build-<pid>-ns<namespace>-<ms>`) is left by a run that has ended: its pid
 * has ended in this very pid namespace, or it is older than a day. A build of another namespace (a container sharing
 * the checkout) or of the older `cli-build-<pid>-<ms>` naming is judged by its age only: its pid cannot be asked here.
 */
export const isLeftBuild = (name, now = Date.now(), ns = pidNamespace(), alive = running) => {
  const m = /^cli-build-(\d+)-(?:ns(\d+)-)?(\d+)$/.exec(name);
  if (!m) return false;
  if (now - Number(m[3]) > STALE_MS) return true;
  return m[2] !== undefined && Number(m[2]) === ns && !alive(Number(m[1]));
};

/** Compiles the CLI into a new directory under .reports/ and answers its path; removes the builds of ended runs. */
export const buildCli = async () => {
  const reports = join(root, '.reports');
  for (const d of existsSync(reports) ? readdirSync(reports) : []) {
    if (isLeftBuild(d)) rmSync(join(reports, d), { recursive: true, force: true });
  }
  const out = join(reports, `cli-build-${process.pid}-ns${pidNamespace()}-${Date.now()}`);
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
