import type { AddHelpTextContext } from 'commander';
import { PASSK } from './doc.ts';
import { breakCommand, wrapLine } from './render.ts';

/**
 * The end of a command's `--help` (examples, JSON shapes, exit codes), fitted to the help's width when it is
 * printed, as commander fits the options above it. The text is written in blocks separated by blank lines:
 *
 * - a block whose first line is a heading ending in ':' ("Examples:") lists commands, one per line, indented by two
 *   spaces (a line ending in ` \` goes on on the next), each shown as a user runs it, `npx passk …` (`asRun`). A
 *   command too long for the width is broken between words
 *   with ` \` and indented, so it can still be pasted into a shell; a `# comment` after it that does not fit goes
 *   on its own line above it;
 * - any other block is prose: a line that starts with a label ("Exit codes: …", "JSON: …") begins a new line, any
 *   other line continues the one before, and each is wrapped to the width, its continuations indented by two.
 */
export const epilog =
  (text: string) =>
  (ctx: AddHelpTextContext): string => {
    const out = ctx.command.configureOutput();
    // a terminal that reports 0 columns has no known width: 80, as into a pipe
    const width = (ctx.error ? out.getErrHelpWidth?.() : out.getOutHelpWidth?.()) || 80;
    return `\n${fitEpilog(text, width)}`;
  };

const LABEL = /^[A-Z][\w ()-]*: /;

export const fitEpilog = (text: string, width: number): string =>
  text
    .trim()
    .split(/\n\s*\n/)
    .map((block) => {
      const lines = block.split('\n');
      const [head, ...rest] = lines;
      return head!.trimEnd().endsWith(':') && rest.length > 0
        ? [wrapLine(head!, width, '  '), ...joinContinued(rest).flatMap((c) => fitCommand(asRun(c), width))].join('\n')
        : proseLines(lines)
            .map((l) => wrapLine(l, width, '  '))
            .join('\n');
    })
    .join('\n\n');

/** `passk` at the start of a command, after any environment assignments (`VAR=value`, `VAR=$(…)`). */
const LEADING_PASSK = /^((?:[A-Z_][A-Z0-9_]*=(?:\$\([^)]*\)|\S+)\s+)*)passk(?=\s|$)/;
/** An example command as a user runs it: `passk …` is shown as `npx passk …` (`PASSK`), like every suggested command. */
export const asRun = (command: string): string => command.replace(LEADING_PASSK, `$1${PASSK}`);

const proseLines = (lines: readonly string[]): string[] => {
  const out: string[] = [];
  for (const l of lines) {
    if (out.length === 0 || LABEL.test(l)) out.push(l.trim());
    else out[out.length - 1] += ` ${l.trim()}`;
  }
  return out;
};

/** Command lines with their ` \` continuations joined. */
const joinContinued = (lines: readonly string[]): string[] => {
  const out: string[] = [];
  let open = false;
  for (const l of lines) {
    const line = open ? `${out.pop()!} ${l.trim()}` : l.trim();
    open = / \\$/.test(line);
    out.push(open ? line.slice(0, -2).trimEnd() : line);
  }
  return out;
};

const fitCommand = (line: string, width: number): string[] => {
  if (line.length + 2 <= width) return [`  ${line}`];
  const m = /^(.*?)\s{2,}(# .*)$/.exec(line);
  const [command, comment] = m ? [m[1]!, m[2]!] : [line, undefined];
  return comment === undefined
    ? breakCommand(command, width)
    : [wrapLine(`  ${comment}`, width, '  # '), ...breakCommand(command, width)];
};
