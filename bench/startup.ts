/**
 * CLI start-up: the repository's dev entry (bin/passk.mjs, TypeScript compiled at run time by tsx) against
 * the built package's entry (dist/cli/main.js, plain JavaScript), on the same commands, in the same run.
 * Builds dist/ first when it is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface StartupLine {
  readonly name: string;
  readonly builtMs: number;
  readonly devMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const timeRun = (root: string, entry: string, args: readonly string[], runs: number): number => {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [entry, ...args], { cwd: root, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${entry} ${args.join(' ')} exited with ${r.status}`);
    ms.push(performance.now() - t0);
  }
  return median(ms);
};

export const benchStartup = (opts: { root: string; runs: number; log: (line: string) => void }): StartupLine[] => {
  const built = join(opts.root, 'dist', 'cli', 'main.js');
  if (!existsSync(built)) {
    opts.log('startup: dist/ missing, running npm run build …');
    execFileSync(process.execPath, [join(opts.root, 'deploy', 'build', 'build.mjs')], { stdio: 'inherit' });
  }
  const dev = join(opts.root, 'bin', 'passk.mjs');
  const commands: [string, string[]][] = [
    ['passk --help', ['--help']],
    ['passk report examples/tau-bench-gpt-4o.jsonl', ['report', 'examples/tau-bench-gpt-4o.jsonl']],
  ];
  return commands.map(([name, args]) => ({
    name,
    devMs: timeRun(opts.root, dev, args, opts.runs),
    builtMs: timeRun(opts.root, built, args, opts.runs),
  }));
};
