import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Issue #13: real inputs never break passk and never vanish. Runs `node bin/passk.mjs …` as a user would.
const root = fileURLToPath(new URL('../../', import.meta.url));
type Run = { code: number; stdout: string; stderr: string };
const passk = (...args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/passk.mjs', ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
// Each case starts node processes on a shared 2-core machine.
vi.setConfig({ testTimeout: 90_000 });
const tmp = mkdtempSync(join(tmpdir(), 'passk-edges-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Group = { suite: string; agent_version: string; rows: number; trials: number; pass_hat_k: Record<string, number> };
const groupsOf = (r: Run): Group[] => (JSON.parse(r.stdout) as { groups: Group[] }).groups;

describe("passk report reads other tools' files as import does", () => {
  it('promptfoo results: the two providers, 20 rows × 3 repeats each', async () => {
    const r = await passk(
      'report',
      '--json',
      '--bootstrap',
      '50',
      'test/fixtures/tool-outputs/promptfoo-repeat3-results.json',
    );
    expect(r.stderr).toContain('read as promptfoo results (120 trials)');
    expect(r.code).toBe(0);
    expect(groupsOf(r).map((g) => [g.agent_version, g.rows, g.trials])).toEqual([
      ['agent-v1', 20, 60],
      ['agent-v2', 20, 60],
    ]);
  });
  it("τ-bench's own results: pass^1..4 = 0.42 / 0.2733 / 0.22 / 0.2", async () => {
    const r = await passk(
      'report',
      '--json',
      '--bootstrap',
      '50',
      'test/fixtures/tool-outputs/tau-bench-gpt-4o-airline-historical.json',
    );
    expect(r.code).toBe(0);
    const [g] = groupsOf(r);
    expect(Object.values(g!.pass_hat_k).map((x) => Math.round(x * 10_000) / 10_000)).toEqual([0.42, 0.2733, 0.22, 0.2]);
  });
  it("import prints τ-bench's pass^1..4 as report does: percent with one decimal (42.0% / 27.3% / 22.0% / 20.0%)", async () => {
    const r = await passk(
      '--data-dir',
      join(tmp, 'tau-import'),
      'import',
      'test/fixtures/tool-outputs/tau-bench-gpt-4o-airline-historical.json',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('42.0% / 27.3% / 22.0% / 20.0%');
  });
  it("Inspect's binary .eval log", async () => {
    const r = await passk('report', '--json', '--bootstrap', '50', 'test/fixtures/inspect-epochs2-intercode-ctf.eval');
    expect(r.code).toBe(0);
    expect(groupsOf(r).map((g) => [g.suite, g.rows, g.trials])).toEqual([['inspect_evals/luce_intercode_ctf', 1, 2]]);
  });
});

describe('one rule for bad lines, in gate, report and import', () => {
  it('a misspelt tags field ("tag") is exit 2 with "did you mean", not a row that silently loses must_not_break', async () => {
    const r = await passk('gate', '--baseline', 'v1', '--candidate', 'v2', 'test/fixtures/refunds-tag-typo.jsonl');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('test/fixtures/refunds-tag-typo.jsonl, line 3, field tag');
    expect(r.stderr).toContain('did you mean "tags"?');
    expect(r.stdout).toBe('');
    const allowed = await passk(
      'gate',
      '--baseline',
      'v1',
      '--candidate',
      'v2',
      '--allow-unknown-fields',
      'test/fixtures/refunds-tag-typo.jsonl',
    );
    expect(allowed.code).toBe(1);
  });

  it('an empty file: exit 2 from import as from report', async () => {
    const dataDir = join(tmp, 'empty-import');
    const imported = await passk('--data-dir', dataDir, 'import', 'test/fixtures/empty.jsonl');
    const reported = await passk('report', 'test/fixtures/empty.jsonl');
    expect([imported.code, reported.code]).toEqual([2, 2]);
    expect(imported.stderr).toContain('test/fixtures/empty.jsonl: no trials in this file');
  });

  it("import reads Inspect's binary .eval log", async () => {
    const dataDir = join(tmp, 'eval-import');
    const r = await passk(
      '--data-dir',
      dataDir,
      'import',
      '--json',
      'test/fixtures/inspect-epochs2-intercode-ctf.eval',
    );
    expect(r.code).toBe(0);
    const [f] = (JSON.parse(r.stdout) as { files: { format: string; trials: number; published: number }[] }).files;
    expect(f).toMatchObject({ format: 'inspect', trials: 2, published: 3 });
  });
});

describe('a version compared with itself', () => {
  it('is refused with the reason by compare, gate and gate --declare, before any file or log is read', async () => {
    for (const args of [
      ['compare', '--baseline', 'v1', '--candidate', 'v1', join(tmp, 'no-such-file.jsonl')],
      ['gate', '--baseline', 'v1', '--candidate', 'v1', join(tmp, 'no-such-file.jsonl')],
      ['--data-dir', join(tmp, 'declare'), 'gate', '--declare', '--baseline', 'v1', '--candidate', 'v1'],
    ]) {
      const r = await passk(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(
        'passk: field --candidate: --baseline and --candidate are both v1: a version compared with itself has no change to show (its rows would pair with themselves); name the version it replaces as --baseline\n',
      );
    }
  });
});
