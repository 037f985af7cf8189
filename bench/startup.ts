/**
 * CLI start-up, in wall time and in CPU (user + sys of the whole process, every thread), each against a floor timed in
 * the same run, run after run in turn, so a change in the machine's load falls on all of them:
 * - the built package's entry (dist/cli/main.js, plain JavaScript, what an installed passk runs) against Node itself
 *   starting and exiting (`node -e ""`);
 * - the repository's dev entry (bin/passk.mjs, TypeScript compiled at run time by tsx: what a checkout and the test
 *   suite run, hundreds of times per `npm test`) against Node registering tsx and importing nothing, the floor of that
 *   entry.
 * Builds dist/ first when it is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Wall and CPU milliseconds of one process (medians over the runs). */
export interface Cost {
  readonly wallMs: number;
  readonly cpuMs: number;
}

export interface StartupLine {
  readonly name: string;
  readonly built: Cost;
  readonly dev: Cost;
  /** `node -e ""` in the same runs. */
  readonly node: Cost;
  /** Node registering tsx and importing nothing, in the same runs. */
  readonly tsx: Cost;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Prepended to every timed process (`--import`): at exit it writes the process's own CPU time (getrusage of the whole
 * process: the main thread, tsx's hooks thread and libuv's) to the file PASSK_BENCH_CPU names.
 */
const CPU_PROBE =
  'data:text/javascript,' +
  encodeURIComponent(
    "import { writeFileSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); " +
      'writeFileSync(process.env.PASSK_BENCH_CPU, String((u.user + u.system) / 1000)); });',
  );

/** The floor of the dev entry: what bin/passk.mjs does before it imports passk's first module. */
const TSX_ONLY = ['--input-type=module', '-e', "const { register } = await import('tsx/esm/api'); register();"];

export const benchStartup = (opts: { root: string; runs: number; log: (line: string) => void }): StartupLine[] => {
  const built = join(opts.root, 'dist', 'cli', 'main.js');
  if (!existsSync(built)) {
    opts.log('startup: dist/ missing, running npm run build …');
    execFileSync(process.execPath, [join(opts.root, 'deploy', 'build', 'build.mjs')], { stdio: 'inherit' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-startup-'));
  const cpuFile = join(dir, 'cpu');
  const timeOnce = (args: readonly string[]): { wallMs: number; cpuMs: number } => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--import', CPU_PROBE, ...args], {
      cwd: opts.root,
      stdio: 'ignore',
      // a data directory of its own: `report` reads files only, but no run may touch the checkout's .passk
      env: { ...process.env, PASSK_BENCH_CPU: cpuFile, PASSK_DATA_DIR: join(dir, 'data') },
    });
    const wallMs = performance.now() - t0;
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${r.status}`);
    return { wallMs, cpuMs: Number(readFileSync(cpuFile, 'utf8')) };
  };
  const dev = join(opts.root, 'bin', 'passk.mjs');
  const commands: [string, string[]][] = [
    ['passk --help', ['--help']],
    ['passk report --help', ['report', '--help']],
    ['passk report examples/tau-bench-gpt-4o.jsonl', ['report', 'examples/tau-bench-gpt-4o.jsonl']],
  ];
  try {
    return commands.map(([name, args]) => {
      const runs = { built: [] as Cost[], dev: [] as Cost[], node: [] as Cost[], tsx: [] as Cost[] };
      for (let i = 0; i < opts.runs; i++) {
        runs.built.push(timeOnce([built, ...args]));
        runs.node.push(timeOnce(['-e', '']));
        runs.dev.push(timeOnce([dev, ...args]));
        runs.tsx.push(timeOnce(TSX_ONLY));
      }
      const cost = (xs: Cost[]): Cost => ({
        wallMs: median(xs.map((x) => x.wallMs)),
        cpuMs: median(xs.map((x) => x.cpuMs)),
      });
      opts.log(`startup: ${name} done`);
      return { name, built: cost(runs.built), dev: cost(runs.dev), node: cost(runs.node), tsx: cost(runs.tsx) };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
