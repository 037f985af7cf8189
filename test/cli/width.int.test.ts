import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../cli/manifest.ts';
import { passk } from '../browser/processes.ts';

/**
 * The CLI at 80 columns, as in an 80×24 terminal: `--width 80` stands for `process.stdout.columns` (a child's
 * stdout is a pipe, not a terminal). No line of any command's output may be wider than 80, and `--help` is wrapped
 * once: a line ends early only where a paragraph ends.
 */
/** The text without colour codes (picocolors colours output when CI is set, even into a pipe). */
// eslint-disable-next-line no-control-regex
const plain = (s: string): string => s.replace(/\u001b\[[0-9;]*m/g, '');
const width = (line: string): number => [...plain(line)].length;
const tooWide = (out: string): string[] => out.split('\n').filter((l) => width(l) > 80);
const FIXTURE = 'test/fixtures/refunds-breaks-mnb.jsonl';
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'passk-width-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// Each test spawns its own children (its own data directories): they run side by side, five at a time (vitest's
// maxConcurrency), and the file holds its worker for less of `npm test`'s int tail (#28: 1m56 one at a time in CI).
describe.concurrent('output at 80 columns', () => {
  it.each([
    ['report', ['report', FIXTURE]],
    ['compare', ['compare', '--baseline', 'v1', '--candidate', 'v2', FIXTURE]],
    ['gate', ['gate', '--baseline', 'v1', '--candidate', 'v2', FIXTURE]],
  ])('%s has no line wider than 80', async (_name, args) => {
    const wide = await passk(['--wide', ...args]);
    const r = await passk(['--width', '80', ...args]);
    expect(r.stdout.length).toBeGreaterThan(100);
    expect(tooWide(r.stdout)).toEqual([]);
    // the same command unconstrained is wider: the fitting did something
    expect(tooWide(wide.stdout).length).toBeGreaterThan(0);
    expect(r.code).toBe(wide.code);
  });

  it('import has no line wider than 80', async () => {
    const r = await passk(['--width', '80', '--data-dir', tmp(), 'import', FIXTURE]);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(20);
    expect(tooWide(r.stdout)).toEqual([]);
  });

  it('run has no line wider than 80, and ends with the next command', async () => {
    const args = [
      'run',
      '--dataset',
      'examples/refund-agent/refunds.jsonl',
      '--agent',
      'examples/refund-agent/agent.ts',
    ];
    const wide = await passk(['--wide', '--data-dir', tmp(), ...args, '--k', '2']);
    const r = await passk(['--width', '80', '--data-dir', tmp(), ...args, '--k', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('completed');
    expect(tooWide(r.stdout)).toEqual([]);
    expect(tooWide(wide.stdout).length).toBeGreaterThan(0);
    // the next commands, one a line, complete as printed (npx passk, the data directory), broken with ` \` to fit
    const next = plain(r.stdout)
      .trimEnd()
      .replace(/ \\\n\s+/g, ' ')
      .split('\n')
      .slice(-2);
    expect(next).toEqual([
      expect.stringMatching(/^next: npx passk --data-dir \S+ process --until-caught-up$/),
      expect.stringMatching(/^next: npx passk --data-dir \S+ report --from-store$/),
    ]);
  });

  it('review has no line wider than 80, and ends with the confirm command to run next', async () => {
    const data = tmp();
    const sampled = await passk(['--data-dir', data, 'sample', 'examples/traces.jsonl', '--rate', '1']);
    expect(sampled.code, sampled.stderr).toBe(0);
    const wide = await passk(['--wide', '--data-dir', data, 'review', '--from', 'log']);
    const r = await passk(['--width', '80', '--data-dir', data, 'review', '--from', 'log']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('sampled production failures to review');
    expect(tooWide(r.stdout)).toEqual([]);
    expect(tooWide(wide.stdout).length).toBeGreaterThan(0);
    expect(plain(r.stdout).replace(/ \\\n\s+/g, ' ')).toMatch(
      /next: npx passk --data-dir \S+ review --confirm \S+ --expected '<answer>' --dataset '<id>' --reviewer '<you>'/,
    );
  });

  it('the demo has no line wider than 80', async () => {
    const r = await passk(['--width', '80', '--data-dir', tmp(), 'demo', '--no-serve'], { timeoutMs: 400_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Gate');
    expect(tooWide(r.stdout)).toEqual([]);
  }, 420_000);

  it('piped, the width is --width, else COLUMNS, else none (whole lines); the help follows COLUMNS too', async () => {
    const args = ['compare', '--baseline', 'v1', '--candidate', 'v2', FIXTURE];
    const columns = await passk(args, { env: { COLUMNS: '80' } });
    expect(columns.stdout.length).toBeGreaterThan(100);
    expect(tooWide(columns.stdout)).toEqual([]);
    // the flag wins over COLUMNS, and so does --wide; without either, a pipe gets whole lines
    for (const flags of [['--width', '200'], ['--wide'], []]) {
      const r = await passk([...flags, ...args], { env: flags.length > 0 ? { COLUMNS: '80' } : {} });
      expect(tooWide(r.stdout).length, flags.join(' ') || 'no COLUMNS').toBeGreaterThan(0);
    }
    const help = await passk(['report', '--help'], { env: { COLUMNS: '100' } });
    expect(help.stdout.split('\n').some((l) => width(l) > 80)).toBe(true);
    expect(help.stdout.split('\n').every((l) => width(l) <= 100)).toBe(true);
  });

  it('rejects a width that is not a number of columns, naming the flag', async () => {
    const r = await passk(['--width', 'eighty', 'report', FIXTURE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--width');
  });
});

describe.concurrent('--help, wrapped once', () => {
  it.each(Object.keys(COMMANDS))(
    'passk %s --help breaks lines only where they are full or a paragraph ends',
    async (name) => {
      const r = await passk([name, '--help']);
      expect(r.code).toBe(0);
      const lines = r.stdout.split('\n');
      const start = lines.findIndex((l) => l.startsWith('Usage:')) + 2;
      const end = lines.findIndex((l, i) => i >= start && /^(Arguments|Options|Commands):/.test(l));
      const description = lines.slice(start, end === -1 ? undefined : end);
      expect(description.join(' ').trim().length).toBeGreaterThan(0);
      for (const [i, line] of description.entries()) {
        const next = description[i + 1];
        if (!next?.trim() || !line.trim()) continue; // a paragraph ends here
        const nextWord = next.trim().split(/\s+/)[0]!;
        // a single wrap at 80: the next line's first word would not have fitted on this one
        expect(width(line) + 1 + width(nextWord), `${name}: "${line}" / "${next}"`).toBeGreaterThan(80);
      }
    },
  );
});
