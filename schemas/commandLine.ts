/**
 * How passk shows a command to run, the same in the CLI and the dashboard: `npx passk` (a bare `passk` is "command
 * not found" in a repository that installed passk), then arguments quoted as a POSIX shell needs them. Pure text:
 * the CLI adds its invocation's global options (cli/format/doc.ts `passkCommand`), and hands that formatter to the
 * dashboard it serves (web/server.ts `command`).
 */
export const PASSK = 'npx passk';

/** A passk command line from its arguments (e.g. `run --dataset rows.jsonl`): what is printed, runnable as is. */
export type PasskCommand = (args: string) => string;

/** `npx passk` and the arguments, nothing else: for a dashboard not served by the CLI (tests, embedding). */
export const plainPasskCommand: PasskCommand = (args) => `${PASSK} ${args}`;

/** A shell word as it can be pasted: plain, or in single quotes. */
export const quoteArg = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/** The dataset file and agent a version's latest `passk run` was given (RunFinished). */
export type RunFiles = { readonly dataset_path: string; readonly agent_spec: string };

/**
 * The arguments of a confirmation run of `version`: on suspects.txt (the rows to settle, one id a line), or on the
 * rows the processors requested (`requested`: `--confirmations`); in full when its dataset file and agent are known,
 * else with ROWS.jsonl and AGENT_OF_<version> standing in for them.
 */
export const confirmRunArgs = (o: {
  version: string;
  suite?: string;
  source?: RunFiles;
  requested?: boolean;
}): string =>
  [
    'run',
    `--dataset ${o.source ? quoteArg(o.source.dataset_path) : 'ROWS.jsonl'}`,
    // the placeholder names the version: quoted as it is, it pastes as one word and runs nothing
    `--agent ${quoteArg(o.source ? o.source.agent_spec : `AGENT_OF_${o.version}`)}`,
    ...(o.suite === undefined ? [] : [`--suite ${quoteArg(o.suite)}`]),
    `--agent-version ${quoteArg(o.version)}`,
    o.requested ? '--confirmations' : '--confirm suspects.txt --extra 3',
  ].join(' ');
