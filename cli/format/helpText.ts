import type { AddHelpTextContext } from 'commander';
import { wrapLine } from './render.ts';

/**
 * The end of a command's `--help` (examples, JSON shapes, exit codes), fitted to the help's width when it is
 * printed, as commander fits the options above it. The text is written in blocks separated by blank lines:
 *
 * - a block whose first line is a heading ending in ':' ("Examples:") lists commands, one per line, indented by two
 *   spaces (a line ending in ` \` goes on on the next). A command too long for the width is broken between words
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
        ? [wrapLine(head!, width, '  '), ...joinContinued(rest).flatMap((c) => fitCommand(c, width))].join('\n')
        : proseLines(lines)
            .map((l) => wrapLine(l, width, '  '))
            .join('\n');
    })
    .join('\n\n');

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

/** Shell words: quoted strings stay whole. */
const WORD = /(?:[^\s'"]+|'[^']*'|"[^"]*")+/g;

const fitCommand = (line: string, width: number): string[] => {
  if (line.length + 2 <= width) return [`  ${line}`];
  const m = /^(.*?)\s{2,}(# .*)$/.exec(line);
  const [command, comment] = m ? [m[1]!, m[2]!] : [line, undefined];
  const words = flagsWithValues(command.match(WORD) ?? []);
  return comment === undefined
    ? breakWords(words, width)
    : [wrapLine(`  ${comment}`, width, '  # '), ...breakWords(words, width)];
};

/** A flag and its value are kept on one line: `--k 3`, not `--k \` and `3`. */
const flagsWithValues = (words: readonly string[]): string[] => {
  const out: string[] = [];
  for (const w of words) {
    const last = out.at(-1);
    if (last !== undefined && /^--?[\w-]+$/.test(last) && !w.startsWith('-')) out[out.length - 1] = `${last} ${w}`;
    else out.push(w);
  }
  return out;
};

/** `words` as one command over as many lines as it needs: each ends in ` \` but the last; the rest indented by 4. */
const breakWords = (words: readonly string[], width: number): string[] => {
  const out: string[] = [];
  let cur = ' ';
  for (const w of words) {
    // room for the word, and for the " \" a following line would need
    if (cur.trim() && `${cur} ${w} \\`.length > width) {
      out.push(`${cur} \\`);
      cur = '   ';
    }
    cur += ` ${w}`;
  }
  out.push(cur);
  return out;
};
