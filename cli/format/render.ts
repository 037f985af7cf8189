import { createRequire } from 'node:module';
import type TableClass from 'cli-table3';
import pc from 'picocolors';
import { cellText, PASSK, type Block, type Cell, type Tone } from './doc.ts';
import { maxOf, pushAll } from '../../processors/core/arrays.ts';
import { safeText } from '../../processors/core/safeText.ts';

const paint = (s: string, tone: Tone): string =>
  tone === 'good'
    ? pc.green(s)
    : tone === 'bad'
      ? pc.red(s)
      : tone === 'warn'
        ? pc.yellow(s)
        : tone === 'dim'
          ? pc.dim(s)
          : s;
const paintCell = (c: Cell): string => (typeof c === 'string' ? c : paint(c.text, c.tone));

export { safeText };
const safeCell = (c: Cell): Cell => (typeof c === 'string' ? safeText(c) : { ...c, text: safeText(c.text) });
/** Every text of the blocks made safe (renderers add their own colours afterwards). */
const safeBlocks = (blocks: readonly Block[]): Block[] =>
  blocks.map((b) => {
    switch (b.kind) {
      case 'heading':
      case 'text':
        return { ...b, text: safeText(b.text) };
      case 'list':
        return { ...b, title: safeText(b.title), items: b.items.map(safeText) };
      case 'table':
        return { ...b, head: b.head.map(safeText), rows: b.rows.map((r) => r.map(safeCell)) };
      case 'commands':
        return {
          ...b,
          commands: b.commands.map(safeText),
          ...(b.note === undefined ? {} : { note: safeText(b.note) }),
        };
    }
  });

/** No rule between body rows: tables stay short enough to read in a terminal. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/**
 * How wide terminal output may be, the first that answers: `--width N` (or `--wide`: unlimited), the `COLUMNS`
 * environment variable, the terminal's own width (`process.stdout.columns`) when stdout is a terminal; otherwise
 * unlimited (a pipe or a file gets whole lines). URLs and paths are never cut, whatever the width (`wrapLine`).
 */
const layout: { width?: number; wide: boolean; columns?: number } = { wide: false };
/** Sets the layout; `columns` is `COLUMNS` read as a width (`parseWidth`), and is set (or unset) whenever given. */
export const setTerminalLayout = (o: { width?: number; wide?: boolean; columns?: number }): void => {
  if (o.width !== undefined) layout.width = o.width;
  if (o.wide !== undefined) layout.wide = o.wide;
  if ('columns' in o) layout.columns = o.columns;
};
/** A width given as text (`--width`, `COLUMNS`) as columns: a whole number, at least 20; anything else is `undefined`. */
export const parseWidth = (value: string | undefined): number | undefined => {
  const n = Number(value);
  return value !== undefined && value.trim() !== '' && Number.isInteger(n) && n >= 20 ? n : undefined;
};
/** A terminal that reports 0 columns (some CI ptys, `script`) has no known width: nothing is wrapped. */
const usableWidth = (columns: number | undefined): number | undefined =>
  columns !== undefined && Number.isFinite(columns) && columns > 0 ? columns : undefined;
const terminalWidth = (): number | undefined =>
  layout.wide
    ? undefined
    : (layout.width ?? layout.columns ?? (process.stdout.isTTY ? usableWidth(process.stdout.columns) : undefined));

/** Below this many columns a table that does not fit becomes one key/value block per row. */
export const KEY_VALUE_BELOW = 100;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
const visible = (s: string): number => [...s.replace(ANSI, '')].length;

/** Word-wraps one line to `width`, continuation lines indented by `indent` (the line's own indent by default). */
// A word that is a URL or a path (`/…`, `./…`, `../…`, `~/…`; after an opening bracket or quote at most): a URL deep
// inside another token, such as a JSON excerpt of a dead letter's bytes, is not a link anyone clicks, and that token
// is cut like any other.
const URL_IN = /^\s*[("'<[]?(?:[a-z][a-z0-9+.-]*:\/\/|~?\.{0,2}\/)\S/i;

export const wrapLine = (line: string, width: number | undefined, indent?: string): string => {
  if (width === undefined || !(width > 0) || visible(line) <= width) return line;
  const lead = /^\s*(?:[•✓✗!-] )?/.exec(line)![0];
  const hang = indent ?? ' '.repeat(visible(lead));
  const out: string[] = [];
  let cur = '';
  // words break at ordinary spaces only: a no-break space (U+00A0) keeps a number with its unit ("35.5 s")
  for (const word of line.split(/(?<=[ \t])(?=[^ \t])/)) {
    if (cur && visible(cur + word.trimEnd()) > width) {
      out.push(cur.trimEnd());
      cur = hang + word.trimStart();
    } else cur += word;
    // (a word that ends exactly at the width is not cut: its trailing space does not count)
    // A URL or a path is never cut: a newline inside it breaks it when copied or clicked. It overflows its line instead.
    if (URL_IN.test(word)) continue;
    while (visible(cur.trimEnd()) > width) {
      // one word longer than the line: cut it
      out.push(cur.slice(0, width));
      cur = hang + cur.slice(width);
    }
  }
  if (cur.trim()) out.push(cur.trimEnd());
  return out.join('\n');
};
const wrapText = (s: string, width: number | undefined): string =>
  s
    .split('\n')
    .map((l) => wrapLine(l, width))
    .join('\n');

const tableWidth = (widths: readonly number[]): number => widths.reduce((a, w) => a + w + 2, 0) + widths.length + 1;

/**
 * Column widths that fit `width`: the widest columns shrink first (their cells wrap), none below `floor[i]`.
 * Undefined when the table cannot fit that way.
 */
const shrinkToFit = (natural: readonly number[], floor: readonly number[], width: number): number[] | undefined => {
  const w = [...natural];
  while (tableWidth(w) > width) {
    let i = -1;
    for (let j = 0; j < w.length; j++) if (w[j]! > floor[j]! && (i < 0 || w[j]! > w[i]!)) i = j;
    if (i < 0) return undefined;
    w[i]!--;
  }
  return w;
};

const longestWord = (s: string): number => Math.max(0, maxOf(s.split(/\s+/).map(visible)));

const renderTable = (full: Extract<Block, { kind: 'table' }>, width: number | undefined): string => {
  // a column empty in every row says nothing on a terminal (Markdown and JSON keep it)
  const keep = full.head.map((_, i) => full.rows.length === 0 || full.rows.some((r) => cellText(r[i] ?? '').trim()));
  const b = {
    ...full,
    head: full.head.filter((_, i) => keep[i]),
    rows: full.rows.map((r) => r.filter((_, i) => keep[i])),
  };
  const cells = (i: number): string[] => [b.head[i] ?? '', ...b.rows.map((r) => (r[i] ? cellText(r[i]) : ''))];
  const natural = b.head.map((_, i) => maxOf(cells(i).flatMap((c) => c.split('\n').map(visible))));
  let colWidths: number[] | undefined;
  if (width !== undefined && tableWidth(natural) > width) {
    // a table that fits once its widest cells wrap at word boundaries stays a table
    const words = b.head.map((_, i) => Math.min(natural[i]!, Math.max(6, maxOf(cells(i).map(longestWord)))));
    colWidths = shrinkToFit(natural, words, width);
    // ...unless its cells would wrap into tall columns: then key/value blocks read better
    const tall = (w: readonly number[]) =>
      b.rows.some((r) => r.some((c, i) => Math.ceil(visible(cellText(c)) / Math.max(1, w[i]!)) > 3));
    if ((!colWidths || tall(colWidths)) && width < KEY_VALUE_BELOW) {
      // key/value blocks: the first column names the row ("row r01", "planned 72"), the others follow as "head  value"
      const keyWidth = maxOf(b.head.slice(1).map(visible));
      return b.rows
        .map((r) =>
          [
            wrapLine(`${b.head[0] ? `${pc.dim(b.head[0])} ` : ''}${pc.bold(cellText(r[0] ?? '') || '—')}`, width),
            ...b.head.slice(1).flatMap((h, i) => {
              const value = paintCell(r[i + 1] ?? '');
              if (!cellText(r[i + 1] ?? '').trim()) return [];
              const pad = ' '.repeat(keyWidth - visible(h));
              return wrapLine(`  ${pc.dim(h)}${pad}  ${value.replace(/\n/g, ' ')}`, width, ' '.repeat(keyWidth + 4));
            }),
          ].join('\n'),
        )
        .join('\n');
    }
    // wider terminals: shrink as far as it goes (cells are cut into pieces of at least 6)
    colWidths = (
      colWidths ??
      shrinkToFit(
        natural,
        natural.map((n) => Math.min(n, 6)),
        width,
      ) ??
      natural
    ).map((w) => w + 2);
  }
  // cli-table3 (and its string-width) loaded at the first table, not at start-up: `passk --help` draws none
  const Table = createRequire(import.meta.url)('cli-table3') as typeof TableClass;
  const t = new Table({
    head: b.head.map((h) => pc.bold(h)),
    style: { head: [], border: [] },
    wordWrap: true,
    chars: COMPACT,
    ...(colWidths ? { colWidths } : {}),
  });
  pushAll(
    t,
    b.rows.map((r) => r.map(paintCell)),
  );
  return t.toString();
};

/**
 * Terminal output: headings, cli-table3 tables, colours only when the terminal supports them. Everything fits the
 * terminal's width: text wraps at word boundaries, tables wrap their cells, and below ~100 columns a table that does
 * not fit turns into key/value blocks (`--wide` opts out).
 */
export const renderTerminal = (blocks: readonly Block[], opts: { width?: number } = {}): string => {
  const width = usableWidth(opts.width) ?? (opts.width === undefined ? terminalWidth() : undefined);
  return (
    safeBlocks(blocks)
      .map((b) => {
        switch (b.kind) {
          case 'heading':
            return paint(wrapText(b.level === 1 ? pc.bold(b.text) : pc.underline(b.text), width), b.tone);
          case 'text':
            return paint(wrapText(b.text, width), b.tone);
          case 'list':
            return `${paint(wrapText(b.title, width), b.tone)}\n${b.items.length === 0 ? '  —' : b.items.map((i) => wrapLine(`  • ${i}`, width)).join('\n')}`;
          case 'table':
            return renderTable(b, width);
          case 'commands':
            return paint(commandLines(b, width).join('\n'), b.tone);
        }
      })
      .join('\n') + '\n'
  );
};

/**
 * Shell words: quoted strings stay whole, and so does a backslash's character (quoteArg's `'\\''` for a quote in a
 * word: without it, a word with a quote and a space was cut at the space, and its closing quote dropped).
 */
const WORD = /(?:[^\s'"\\]+|\\[\s\S]|'[^']*'|"(?:[^"\\]|\\[\s\S])*")+/g;

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

/**
 * A shell command over as many lines as `width` needs, so that it still pastes as one: each line but the last ends
 * in ` \`, a flag stays with its value, quoted strings stay whole. The first line starts with `first`, the others with
 * `rest`. A word wider than the line overflows it (a URL, a path) rather than being cut.
 */
export const breakCommand = (command: string, width: number, first = '  ', rest = '    '): string[] => {
  const out: string[] = [];
  let cur = first;
  let empty = true;
  for (const w of flagsWithValues(command.match(WORD) ?? [])) {
    // room for the word, and for the " \" a following line would need
    if (!empty && `${cur} ${w} \\`.length > width) {
      out.push(`${cur} \\`);
      cur = rest;
      empty = true;
    }
    cur += empty ? w : ` ${w}`;
    empty = false;
  }
  out.push(cur);
  return out;
};

/** A `commands` block's lines: `label: command`, broken with ` \` where wider than `width`; the note as a comment. */
const commandLines = (b: Extract<Block, { kind: 'commands' }>, width: number | undefined): string[] =>
  b.commands.flatMap((command, i) => {
    const lead = `${b.label}: `;
    const note = i === b.commands.length - 1 && b.note !== undefined ? `  # ${b.note}` : '';
    if (width === undefined || visible(lead + command + note) <= width) return [lead + command + note];
    const lines = breakCommand(command, width, lead);
    return note ? [...lines, wrapLine(`    # ${b.note}`, width, '    # ')] : lines;
  });

const escapeMd = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, '<br>');

/** GitHub-flavoured Markdown, e.g. for a pull-request comment. */
export const renderMarkdown = (blocks: readonly Block[]): string =>
  safeBlocks(blocks)
    .map((b) => {
      switch (b.kind) {
        case 'heading':
          return `${b.level === 1 ? '##' : '###'} ${b.text}\n`;
        case 'text':
          return `${b.text}\n`;
        case 'list':
          return `**${b.title}**\n\n${b.items.length === 0 ? '- —' : b.items.map((i) => `- ${escapeMd(i)}`).join('\n')}\n`;
        case 'table':
          return [
            `| ${b.head.map(escapeMd).join(' | ')} |`,
            `|${b.head.map(() => ' --- ').join('|')}|`,
            ...b.rows.map((r) => `| ${r.map((c) => escapeMd(cellText(c))).join(' | ')} |`),
            '',
          ].join('\n');
        case 'commands':
          return b.commands
            .map((c, i) => `${b.label}: ${c}${i === b.commands.length - 1 && b.note ? ` (${b.note})` : ''}\n`)
            .join('\n');
      }
    })
    .join('\n');

/** JSON escapes C0 controls itself; C1 controls and bidi overrides are escaped here too (`\u009b`), still valid JSON. */
export const renderJson = (value: unknown): string =>
  `${JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;

/**
 * The width of a progress bar on stderr that leaves `reserve` columns for its text (counts, ETA), so the whole line
 * fits the terminal: between 10 and 40 cells.
 */
export const progressBarSize = (reserve: number): number =>
  Math.max(10, Math.min(40, (usableWidth(process.stderr.columns) ?? 80) - reserve - 1));

/** A line of a message that is a command to run, on a line of its own after the message (`  npx passk …`). */
const COMMAND_LINE = new RegExp(`^(\\s+)(?=${PASSK} )`);

/**
 * A message as stderr shows it in `width` columns: each line word-wrapped (a status line never breaks inside a word),
 * and a command on a line of its own (indented `npx passk …`) broken with ` \` instead, so it still pastes as one
 * (word-wrapped, it was cut into lines a shell runs one by one). No width: lines stay whole.
 */
export const fitStderr = (text: string, width: number | undefined): string =>
  width === undefined
    ? text
    : text
        .split('\n')
        .map((l) => {
          const lead = COMMAND_LINE.exec(l)?.[1];
          return lead === undefined || visible(l) <= width
            ? wrapLine(l, width, '  ')
            : breakCommand(l.slice(lead.length), width, lead, `${lead}  `).join('\n');
        })
        .join('\n');

/** Writes messages to stderr: fitted to the terminal's width (`fitStderr`); piped, lines stay whole. */
export const writeStderr = (text: string): boolean =>
  process.stderr.write(
    fitStderr(safeText(text), process.stderr.isTTY && process.stderr.columns ? process.stderr.columns : undefined),
  );
