import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

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
  it("Inspect's binary .eval log", async () => {
    const r = await passk('report', '--json', '--bootstrap', '50', 'test/fixtures/inspect-epochs2-intercode-ctf.eval');
    expect(r.code).toBe(0);
    expect(groupsOf(r).map((g) => [g.suite, g.rows, g.trials])).toEqual([['inspect_evals/luce_intercode_ctf', 1, 2]]);
  });
});
