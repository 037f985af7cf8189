import { expect } from 'vitest';
import { passk } from '../browser/processes.ts';

/** How a test runs the CLI: a data directory (`--data-dir`), a working directory, extra env, a timeout. */
export interface CliOptions {
  dataDir?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/**
 * The CLI as a test runs it, as a child process (`passk` of test/browser/processes.ts): `cli(...args)` answers what
 * the command did, `ok(...args)` fails the test unless it exited 0, naming the command and printing its output. Pass
 * a function when the options are only known in `beforeAll` (a temp dir made there).
 */
export const cliFor = (options: CliOptions | (() => CliOptions)) => {
  const current = typeof options === 'function' ? options : () => options;
  const cli = (...args: string[]) => {
    const { dataDir, cwd, env, timeoutMs } = current();
    return passk(dataDir === undefined ? args : ['--data-dir', dataDir, ...args], { cwd, env, timeoutMs });
  };
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    expect(r.code, `passk ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r;
  };
  return { cli, ok };
};

/**
 * A command agent (`--agent`) that answers `output` to every row: the shell reads the request to its end and prints
 * the answer. A process per trial, as every `cmd:` agent, but no Node start: a `node -e` agent cost ~57 ms of CPU per
 * trial, this one ~1 ms (retract.int runs 100 trials of it).
 */
export const agentAnswering = (output: string) => `cmd:cat >/dev/null; echo '${JSON.stringify({ output })}'`;
