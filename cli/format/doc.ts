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
  | { kind: 'list'; title: string; items: string[]; tone?: Tone };

export const cellText = (c: Cell): string => (typeof c === 'string' ? c : c.text);
export const heading = (text: string, level: 1 | 2 = 1, tone?: Tone): Block => ({ kind: 'heading', text, level, tone });
export const text = (t: string, tone?: Tone): Block => ({ kind: 'text', text: t, tone });
export const table = (head: string[], rows: Cell[][]): Block => ({ kind: 'table', head, rows });
export const list = (title: string, items: string[], tone?: Tone): Block => ({ kind: 'list', title, items, tone });

/** The next command a user would run, printed last and dim (terminal output only, never JSON or Markdown). */
export const nextCommand = (command: string): Block => text(`next: ${command}`, 'dim');

/** How a command named its trials, to say them again in the next command: files, or --from-store (with --suite). */
export const sourceArgs = (
  files: readonly string[],
  flags: { fromStore?: boolean; suite?: readonly string[] },
): string =>
  flags.fromStore
    ? ['--from-store', ...(flags.suite ?? []).map((x) => `--suite ${quoteArg(x)}`)].join(' ')
    : files.map(quoteArg).join(' ');

export const quoteArg = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
