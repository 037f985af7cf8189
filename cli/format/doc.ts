/**
 * A neutral document model: each command turns its result into blocks once, and the renderers
 * print the blocks as terminal tables (cli-table3) or as Markdown, so the two never drift apart.
 */
export type Tone = 'good' | 'bad' | 'warn' | 'dim' | undefined;
export type Cell = string | { text: string; tone?: Tone };
export type Block =
  | { kind: 'heading'; text: string; level: 1 | 2; tone?: Tone }
  | { kind: 'text'; text: string; tone?: Tone }
  | { kind: 'table'; head: string[]; rows: Cell[][] }
  | { kind: 'list'; title: string; items: string[]; tone?: Tone }
  /** Shell commands to run, one a line after `label: `, with a `# note` after the last; never cut where it can't paste. */
  | { kind: 'commands'; label: string; commands: string[]; note?: string; tone?: Tone };

export const cellText = (c: Cell): string => (typeof c === 'string' ? c : c.text);
export const heading = (text: string, level: 1 | 2 = 1, tone?: Tone): Block => ({ kind: 'heading', text, level, tone });
export const text = (t: string, tone?: Tone): Block => ({ kind: 'text', text: t, tone });
export const table = (head: string[], rows: Cell[][]): Block => ({ kind: 'table', head, rows });
export const list = (title: string, items: string[], tone?: Tone): Block => ({ kind: 'list', title, items, tone });

/**
 * How the CLI shows a passk command to run: `npx passk`, which runs the passk a repository installed (a bare `passk`
 * is not on its PATH: "command not found") as well as a checkout's. Every suggested command goes through
 * `passkCommand`, and `--help`'s examples are shown with it (`fitEpilog`).
 */
import { PASSK, quoteArg, type PasskCommand } from '../../schemas/commandLine.ts';

export { PASSK, quoteArg };

/** This invocation's global options that say where passk reads and writes, as arguments (`setCommandGlobals`). */
let globalArgs: readonly string[] = [];
/**
 * Sets the global options every suggested command repeats (`--config`, `--backend`, `--data-dir`, as this invocation
 * was given them), so that the command, run as printed, reads the same log and store as the one that printed it.
 */
export const setCommandGlobals = (o: { config?: string; backend?: string; dataDir?: string }): void => {
  globalArgs = (
    [
      ['--config', o.config],
      ['--backend', o.backend],
      ['--data-dir', o.dataDir],
    ] as const
  ).flatMap(([flag, value]) => (value === undefined ? [] : [flag, quoteArg(value)]));
};

/** A passk command to run, as printed: `npx passk`, this invocation's global options (`setCommandGlobals`), `args`. */
export const passkCommand: PasskCommand = (args) => [PASSK, ...globalArgs, args].join(' ');

/** This very command again, as it was given (global options included), e.g. to resume it. */
export const thisCommand = (): string => [PASSK, ...process.argv.slice(2).map(quoteArg)].join(' ');

/**
 * The commands a user would run next, in order, one a line, each complete as printed (`passkCommand`), with an
 * optional note (a shell comment after the last); printed last and dim (terminal output only, never JSON or Markdown).
 * A command wider than the terminal is broken between words with ` \`, so it still pastes as one.
 */
export const nextCommand = (commands: string | readonly string[], note?: string): Block => ({
  kind: 'commands',
  label: 'next',
  commands: [commands].flat(),
  ...(note === undefined ? {} : { note }),
  tone: 'dim',
});

/** How a command named its trials, to say them again in the next command: files, or --from-store (with --suite). */
export const sourceArgs = (
  files: readonly string[],
  flags: { fromStore?: boolean; suite?: readonly string[] },
): string =>
  flags.fromStore
    ? ['--from-store', ...(flags.suite ?? []).map((x) => `--suite ${quoteArg(x)}`)].join(' ')
    : files.map(quoteArg).join(' ');
