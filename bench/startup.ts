/**
 * CLI start-up: the built package's entry (dist/cli/main.js, plain JavaScript) against the floor, Node itself
 * starting and exiting (`node -e ""`), and against the repository's dev entry (bin/passk.mjs, TypeScript compiled
 * at run time by tsx), on the same commands, in the same run. The three are timed in turn, run after run, so a
 * change in the machine's load falls on all of them. Builds dist/ first when it is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface StartupLine {
  readonly name: string;
  readonly builtMs: number;
  readonly devMs: number;
  /** `node -e ""` in the same runs. */
  readonly nodeMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const timeOnce = (root: string, args: readonly string[]): number => {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${r.status}`);
  return performance.now() - t0;
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
  return commands.map(([name, args]) => {
    const ms = { built: [] as number[], dev: [] as number[], node: [] as number[] };
    for (let i = 0; i < opts.runs; i++) {
      ms.built.push(timeOnce(opts.root, [built, ...args]));
      ms.node.push(timeOnce(opts.root, ['-e', '']));
      ms.dev.push(timeOnce(opts.root, [dev, ...args]));
    }
    return { name, builtMs: median(ms.built), devMs: median(ms.dev), nodeMs: median(ms.node) };
  });
};
