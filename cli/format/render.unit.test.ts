import { describe, expect, it } from 'vitest';
import { table } from './doc.ts';
import { renderMarkdown, renderTerminal, wrapLine } from './render.ts';

describe('wrapLine', () => {
  it('breaks at word boundaries, every line within the width, no word lost', () => {
    const line = 'the quick brown fox jumps over the lazy dog '.repeat(5).trim();
    const out = wrapLine(line, 20).split('\n');
    expect(out.every((l) => l.length <= 20)).toBe(true);
    expect(out.join(' ')).toBe(line);
  });

  it('a word that ends exactly at the width stays whole and the next line starts with the next word', () => {
    const line = `${'a'.repeat(9)} ${'b'.repeat(10)} next`; // "aaaaaaaaa bbbbbbbbbb" is exactly 20
    expect(wrapLine(line, 20)).toBe(`${'a'.repeat(9)} ${'b'.repeat(10)}\nnext`);
  });

  it('cuts a word longer than the line, and hangs continuation lines under a bullet', () => {
    expect(wrapLine('x'.repeat(25), 10)).toBe('xxxxxxxxxx\nxxxxxxxxxx\nxxxxx');
    expect(wrapLine('  ✓ one two three four', 12)).toBe('  ✓ one two\n    three\n    four');
  });
});

describe('renderTerminal, a table too wide for the terminal', () => {
  // eslint-disable-next-line no-control-regex
  const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');
  const wide = table(
    ['planned', 'already recorded', 'ran', 'passed', 'failed', 'ungraded', 'infra retries', 'wall time', 'cost'],
    [['72', '0', '72', '57', '15', '0', '0', '2.0 s', '$0.0621']],
  );

  it('becomes key/value lines within the width, the first column named by its header', () => {
    const out = plain(renderTerminal([wide], { width: 40 }))
      .trimEnd()
      .split('\n');
    expect(out[0]).toBe('planned 72');
    expect(out).toContain('  already recorded  0');
    expect(out).toContain('  cost              $0.0621');
    expect(out.every((l) => l.length <= 40)).toBe(true);
  });

  it('stays a table when it fits', () => {
    const out = plain(renderTerminal([wide], { width: 200 }));
    expect(out.split('\n')[1]).toMatch(/planned\s+│?\s*already recorded/);
  });
});

describe('renderTerminal, a table a little too wide', () => {
  // eslint-disable-next-line no-control-regex
  const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');
  it('stays a table whose long headers wrap at word boundaries, every line within the width', () => {
    const t = table(
      ['suite', 'row', 'baseline (all attempts)', 'candidate (all attempts)', 'status'],
      [['refunds', 'r01', 'stable-correct 3/3', 'stable-correct 3/3', 'not covered']],
    );
    const out = plain(renderTerminal([t], { width: 64 }))
      .trimEnd()
      .split('\n');
    expect(out.every((l) => l.length <= 64)).toBe(true);
    expect(out.some((l) => /refunds.*r01.*stable-correct/.test(l))).toBe(true);
    expect(out.some((l) => /baseline/.test(l) && /candidate/.test(l))).toBe(true);
  });
});

describe('renderTerminal, an empty column', () => {
  it('is left out on a terminal and kept in Markdown', () => {
    const t = table(
      ['row', 'status', 'confirmation'],
      [
        ['r01', 'ok', ''],
        ['r02', 'ok', ''],
      ],
    );
    expect(renderTerminal([t], { width: 80 })).not.toContain('confirmation');
    expect(renderMarkdown([t])).toContain('confirmation');
  });
});

describe('curve (pass^1..K in one cell)', () => {
  it('shows every value up to six, else the first four, an ellipsis and pass^K with K', async () => {
    const { curve } = await import('./numbers.ts');
    const values = Array.from({ length: 860 }, (_, i) => `v${i + 1}`);
    expect(curve(values.slice(0, 6))).toBe('v1 / v2 / v3 / v4 / v5 / v6');
    expect(curve(values)).toBe('v1 / v2 / v3 / v4 / … / v860 (k = 860)');
    expect(curve([])).toBe('—');
  });
});
