import { confirmRunArgs, PASSK, type PasskCommand, type RunFiles } from '../schemas/commandLine.ts';

/**
 * The commands the dashboard suggests, made on the server by the formatter the CLI prints its own with
 * (schemas/commandLine.ts; `passk serve` hands over its `passkCommand`, which repeats the --config, --backend and
 * --data-dir it was given): `npx passk …`, runnable as shown, with the CLI's placeholders (ROWS.jsonl, AGENT_OF_…)
 * where the store does not know a file. The views never write a command themselves.
 */
export type SuggestedCommands = {
  /** How the views name passk in prose ("recorded only by npx passk run"). */
  passk: string;
  /** Recording a version's trials. */
  record: string;
  /** Another version on the same dataset. */
  add_version: string;
  /** Grading with a judge. */
  judge: string;
  /** Declaring a comparison the processors decide. */
  declare: string;
  /** The confirmation runs a declared comparison asks for, once with the agent of each version. */
  confirmations: string;
  publish: string;
  sample: string;
  /** Every dead letter, as JSON. */
  check: string;
  demo: string;
};

export const suggestedCommands = (command: PasskCommand): SuggestedCommands => ({
  passk: PASSK,
  record: command('run --dataset rows.jsonl --agent agent.ts --k 3'),
  add_version: command('run --dataset rows.jsonl --agent candidate.ts --k 3'),
  judge: command('run --dataset rows.jsonl --agent agent.ts --grader judge --rubric rubric.md'),
  declare: command('gate --declare --baseline A --candidate B --wait 10m'),
  confirmations: command(
    'run --dataset ROWS.jsonl --agent AGENT_OF_VERSION --agent-version VERSION --confirmations --follow',
  ),
  publish: command('dataset publish rows.jsonl --dataset ID'),
  sample: command('sample traces.jsonl --rate 0.05'),
  check: command('check --json'),
  demo: command('demo'),
});

/**
 * The confirmation run of each version of a comparison on suspects.txt, as `passk gate` prints it: in full when the
 * store knows the dataset file and agent its latest `passk run` used (RunFinished), else with placeholders.
 */
export const confirmCommands = (
  cmp: { suite: string; baseline_version: string; candidate_version: string; run_sources?: Record<string, RunFiles> },
  command: PasskCommand,
): Record<string, string> =>
  Object.fromEntries(
    [cmp.baseline_version, cmp.candidate_version].map((version) => {
      const source = cmp.run_sources?.[version];
      return [version, command(confirmRunArgs({ version, suite: cmp.suite, ...(source ? { source } : {}) }))];
    }),
  );
