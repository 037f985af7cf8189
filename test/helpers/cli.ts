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

/**
 * The README's refunds after its commands, plus another agent's traces: dataset refunds published, refund-agent-v1's
 * trials of it (one attempt, every answer deny), examples/traces.jsonl sampled (support-v3's traces among them), all
 * folded. `review --confirm` of a support-v3 trace for refunds is then refused (reviewAgentVersion.int,
 * serveConfirmAgent.int).
 */
export const refundsBesideAnotherAgentsTraces = async (ok: ReturnType<typeof cliFor>['ok']): Promise<void> => {
  await ok('dataset', 'publish', 'examples/refund-agent/refunds.jsonl', '--dataset', 'refunds');
  await ok(
    ...['run', '--dataset', 'examples/refund-agent/refunds.jsonl', '--agent', agentAnswering('deny')],
    ...['--agent-version', 'refund-agent-v1', '--k', '1'],
  );
  await ok('sample', 'examples/traces.jsonl', '--rate', '1');
  await ok('process', '--until-caught-up');
};
