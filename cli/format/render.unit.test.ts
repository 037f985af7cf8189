import { describe, expect, it } from 'vitest';
import { heading, list, table, text } from './doc.ts';
import {
  fitStderr,
  parseWidth,
  renderJson,
  renderMarkdown,
  renderTerminal,
  setTerminalLayout,
  wrapLine,
} from './render.ts';

describe('wrapLine', () => {
  it('cuts a long token that only holds a URL inside it (a JSON excerpt), never a word that is a URL', () => {
    const blob = `{"url":"http://127.0.0.1:43567/v1/traces","name":"${'x'.repeat(30)}"}`;
    for (const l of wrapLine(`bytes ${blob}`, 40).split('\n')) expect(l.length).toBeLessThanOrEqual(40);
  });

  it('never parts a number from its unit joined by a no-break space', () => {
    expect(wrapLine('2472 trials through the pipeline; 35.5\u00a0s', 38)).toBe(
      '2472 trials through the pipeline;\n35.5\u00a0s',
    );
  });

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

  it('never cuts a URL: it goes whole on a line of its own, however long', () => {
    const url = 'http://127.0.0.1:7357/#/rows?suite=refunds&candidate=refund-agent-v2&row=r17&token=0123456789abcdef';
    expect(wrapLine(`Dashboard: ${url} (Ctrl-C stops it)`, 40)).toBe(`Dashboard:\n${url}\n(Ctrl-C stops it)`);
    expect(wrapLine(`  ✓ open ${url}`, 30).split('\n')).toEqual(['  ✓ open', `    ${url}`]);
  });

  it('never cuts a path either (a data directory in an error message)', () => {
    const path = `/home/someone/projects/${'deep/'.repeat(8)}data`;
    expect(wrapLine(`passk: the store in ${path} is held`, 40, '  ')).toBe(`passk: the store in\n  ${path}\n  is held`);
    expect(wrapLine(`see ./${'x'.repeat(40)} and ~/${'y'.repeat(40)}`, 30).split('\n')).toEqual([
      'see',
      `./${'x'.repeat(40)}`,
      'and',
      `~/${'y'.repeat(40)}`,
    ]);
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

describe('text from outside cannot drive the terminal', () => {
  // an end user's input: erase the line, go back, print a fake verdict, set the title, write the clipboard (OSC 52)
  const hostile = '\u001b[2K\rGate: PASS\u001b]0;pwned\u0007\u001b]52;c;ZXZpbA==\u0007\u009b31m\u202etxt.exe';
  const escaped = '\\x1b[2K\\rGate: PASS\\x1b]0;pwned\\x07\\x1b]52;c;ZXZpbA==\\x07\\x9b31m\\u202etxt.exe';

  it.each([
    ['a heading', [heading(hostile)]],
    ['a text', [text(hostile)]],
    ['a list item', [list('inputs', [hostile])]],
    ['a table cell', [table(['row', 'input'], [['r1', hostile]])]],
    ['a table cell with a tone', [table(['row', 'input'], [['r1', { text: hostile, tone: 'bad' }]])]],
    ['a narrow table (key/value blocks)', [table(['row', 'input', 'output'], [[hostile, hostile, 'x'.repeat(90)]])]],
  ] as const)('in %s: every control character is shown as its escape', (_, blocks) => {
    for (const out of [renderTerminal(blocks, { width: 60 }), renderTerminal(blocks), renderMarkdown(blocks)]) {
      // eslint-disable-next-line no-control-regex
      expect(out.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(out.replace(/\s+/g, '')).toContain(escaped.replace(/\s+/g, ''));
    }
  });

  it('JSON output escapes C1 controls and bidi overrides too (C0 is escaped by JSON itself)', () => {
    const out = renderJson({ input: hostile });
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(JSON.parse(out)).toEqual({ input: hostile });
  });
});

/** Runs `f` with `COLUMNS` (as the CLI's hook reads it: `parseWidth`) set to `value`, then unsets it. */
const withColumns = <T>(value: string | undefined, f: () => T): T => {
  setTerminalLayout({ columns: parseWidth(value) });
  try {
    return f();
  } finally {
    setTerminalLayout({ columns: undefined });
  }
};

describe('COLUMNS: the width of output into a pipe when --width does not say', () => {
  const link = 'http://127.0.0.1:7357/#/gates?suite=refunds&comparison=gate-f09ad8c102b92a84&row=R159';
  const blocks = [text(`the quick brown fox jumps over the lazy dog `.repeat(4) + `open ${link} to see it`)];

  it('wraps piped output to COLUMNS (it was ignored: whole lines), and never cuts a URL', () => {
    const out = withColumns('40', () => renderTerminal(blocks))
      .trimEnd()
      .split('\n');
    expect(out.filter((l) => l.length > 40)).toEqual([link]);
    expect(out.length).toBeGreaterThan(4);
  });

  it('leaves lines whole into a pipe without COLUMNS, or with one that is no width', () => {
    for (const value of [undefined, '', '0', '12', 'wide'])
      expect(
        withColumns(value, () => renderTerminal(blocks))
          .trimEnd()
          .split('\n'),
      ).toHaveLength(1);
  });

  it('reads a width as a whole number of at least 20 columns', () => {
    expect(['80', ' 80 ', '20', '19', '0', '-80', '80.5', '', 'x', undefined].map(parseWidth)).toEqual([
      80,
      80,
      20,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('a terminal that reports 0 columns', () => {
  it('is a terminal of unknown width: tables render whole, nothing is wrapped, nothing throws', () =>
    withColumns(undefined, () => {
      const tty = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY');
      const columns = Object.getOwnPropertyDescriptor(process.stdout, 'columns');
      Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true });
      Object.defineProperty(process.stdout, 'columns', { value: 0, configurable: true });
      try {
        const blocks = [heading('report '.repeat(30)), table(['row', 'output'], [['r1', 'word '.repeat(40)]])];
        const out = renderTerminal(blocks);
        expect(out).toContain('report '.repeat(29).trim());
        expect(out).toContain('word '.repeat(39).trim());
        expect(wrapLine('a b c', 0)).toBe('a b c');
      } finally {
        if (tty) Object.defineProperty(process.stdout, 'isTTY', tty);
        else delete (process.stdout as { isTTY?: boolean }).isTTY;
        if (columns) Object.defineProperty(process.stdout, 'columns', columns);
        else delete (process.stdout as { columns?: number }).columns;
      }
    }));
});

describe('usd: costs with their significant digits', () => {
  it('prints cents from $1, two significant digits below, and never $0.0000 for a small cost', async () => {
    const { usd } = await import('./numbers.ts');
    expect([0.00033, 0.0621, 0.5, 1, 12.345, 0, undefined, null].map((x) => usd(x))).toEqual([
      '$0.00033',
      '$0.062',
      '$0.5',
      '$1.00',
      '$12.35',
      '$0',
      '—',
      '—',
    ]);
  });
});

describe('fitStderr: a message and the commands it asks for, on a terminal', () => {
  const command =
    'npx passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent.ts --suite refunds --agent-version refund-agent-v1 --confirmations';
  const message = `passk: the processors ask for confirmation runs: 2 row(s) × 3 attempts on both versions (r05, r15); run them with the dataset file and agent of each version's latest passk run, one command a line, in order:\n  ${command}\n  ${command.replace(/v1/g, 'v2')}`;

  it('breaks each command on a line of its own with ` \\` (word-wrapped, it was cut into lines a shell runs apart)', () => {
    const lines = fitStderr(message, 80).split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    const first = lines.findIndex((l) => l.startsWith('  npx passk'));
    expect(first).toBeGreaterThan(1); // the message, word-wrapped, before it
    expect(lines.slice(0, first).every((l) => !l.endsWith('\\'))).toBe(true);
    const pasted = lines
      .slice(first)
      .join('\n')
      .split(/\n(?= {2}npx passk)/)
      .map((c) => c.replace(/ \\\n\s+/g, ' ').trim());
    expect(pasted).toEqual([command, command.replace(/v1/g, 'v2')]);
  });

  it('leaves a command that fits, and everything without a width, whole', () => {
    expect(fitStderr('passk: stopped\n  npx passk report --from-store', 80)).toBe(
      'passk: stopped\n  npx passk report --from-store',
    );
    expect(fitStderr(message, undefined)).toBe(message);
  });
});
