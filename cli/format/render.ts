import Table from 'cli-table3';
import pc from 'picocolors';
import { cellText, type Block, type Cell, type Tone } from './doc.ts';

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

/** No rule between body rows: tables stay short enough to read in a terminal. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/** Terminal output: headings, cli-table3 tables, colours only when the terminal supports them. */
export const renderTerminal = (blocks: readonly Block[]): string =>
  blocks
    .map((b) => {
      switch (b.kind) {
        case 'heading':
          return paint(b.level === 1 ? pc.bold(b.text) : pc.underline(b.text), b.tone);
        case 'text':
          return paint(b.text, b.tone);
        case 'list':
          return `${paint(b.title, b.tone)}\n${b.items.length === 0 ? '  —' : b.items.map((i) => `  • ${i}`).join('\n')}`;
        case 'table': {
          const t = new Table({
            head: b.head.map((h) => pc.bold(h)),
            style: { head: [], border: [] },
            wordWrap: true,
            chars: COMPACT,
          });
          t.push(...b.rows.map((r) => r.map(paintCell)));
          return t.toString();
        }
      }
    })
    .join('\n') + '\n';

const escapeMd = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, '<br>');

/** GitHub-flavoured Markdown, e.g. for a pull-request comment. */
export const renderMarkdown = (blocks: readonly Block[]): string =>
  blocks
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
      }
    })
    .join('\n');

export const renderJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
