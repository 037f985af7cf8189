import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passk } from '../browser/processes.ts';

/**
 * `report | compare | gate --from-store` print the same document as on a file holding the same trials:
 * the trials go in with `passk import`, `passk process --until-caught-up` fills the embedded chDB store,
 * and each command's --json output must be equal, field for field, read from the file and from the store.
 * Two data sets: the public τ-bench trials, and a generated one with ungraded trials, intermediate checks,
 * must-not-break tags and confirmation runs.
 */
const TAU = 'examples/public-trials/tau_bench.jsonl';

/** 40 rows × 3 attempts × 2 versions, seeded; some ungraded, a few lost rows confirmed by a confirm- run. */
const generated = (): string => {
  let s = 20261201;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const lines: string[] = [];
  const trial = (v: string, row: number, run: string, attempt: number, passed: boolean | null) =>
    lines.push(
      JSON.stringify({
        suite: 'gen',
        dataset_version: 'g1',
        row_id: `g${String(row).padStart(2, '0')}`,
        agent_version: v,
        run_id: run,
        attempt,
        passed,
        output: passed === null ? undefined : passed ? 'approve' : 'deny',
        expected: 'approve',
        checks: [
          { name: 'return_window', answer: rnd() < 0.8 },
          { name: 'proof_of_purchase', answer: passed === true },
        ],
        tags: row % 5 === 0 ? ['must_not_break'] : [],
        ...(passed === null ? { error_kind: 'timeout' } : {}),
      }),
    );
  for (const v of ['v1', 'v2'])
    for (let row = 0; row < 40; row++) {
      const p = v === 'v1' ? 0.85 : row === 10 || row === 13 ? 0 : 0.9;
      for (let a = 0; a < 3; a++) trial(v, row, `run-${v}`, a, rnd() < 0.05 ? null : rnd() < p);
    }
  for (const v of ['v1', 'v2'])
    for (const row of [10, 13]) for (let a = 0; a < 3; a++) trial(v, row, 'confirm-1', a, v === 'v1');
  return `${lines.join('\n')}\n`;
};

let dir: string;
let gen: string;
const cli = async (...args: string[]) => {
  const r = await passk(['--data-dir', join(dir, 'data'), ...args], { env: { NO_COLOR: '1' } });
  return r;
};
const json = async (...args: string[]): Promise<unknown> => {
  const r = await cli(...args);
  if (r.code !== 0 && r.code !== 1) throw new Error(`passk ${args.join(' ')} exited ${r.code}\n${r.stderr}`);
  return JSON.parse(r.stdout);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'passk-from-store-'));
  gen = join(dir, 'generated.jsonl');
  writeFileSync(gen, generated());
  const imported = await cli('import', TAU, gen);
  expect(imported.code, imported.stderr).toBe(0);
  const processed = await cli('process', '--until-caught-up');
  expect(processed.code, processed.stderr).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('read commands on the store print the same document as on files', () => {
  it('report: τ-bench trials', async () => {
    const file = await json('report', '--json', TAU);
    const store = await json('report', '--json', '--from-store', '--suite', 'airline', '--suite', 'retail');
    expect((file as { groups: unknown[] }).groups.length).toBe(2);
    expect(store).toEqual(file);
  });

  it('report: generated trials with ungraded attempts and confirmation runs (with and without them)', async () => {
    const file = await json('report', '--json', gen);
    expect(file).toMatchObject({ groups: [{ ungraded: expect.any(Number) }, {}] });
    expect((file as { groups: { ungraded: number }[] }).groups.some((g) => g.ungraded > 0)).toBe(true);
    expect(await json('report', '--json', '--from-store', '--suite', 'gen')).toEqual(file);
    expect(await json('report', '--json', '--include-confirmation', '--from-store', '--suite', 'gen')).toEqual(
      await json('report', '--json', '--include-confirmation', gen),
    );
    expect(await json('report', '--json', '--from-store', '--dataset-version', 'g1')).toEqual(file);
  });

  it('compare: the same comparison, confirmation outcomes included', async () => {
    const args = ['compare', '--json', '--baseline', 'v1', '--candidate', 'v2'];
    const file = (await json(...args, gen)) as { comparisons: { confirmation: { rows: unknown[] } }[] };
    expect(file.comparisons[0]!.confirmation.rows.length).toBeGreaterThan(0);
    expect(await json(...args, '--from-store', '--suite', 'gen')).toEqual(file);
  });

  it('gate: the same verdict and reasons (and exit code)', async () => {
    const args = ['gate', '--json', '--baseline', 'v1', '--candidate', 'v2'];
    const fromFile = await cli(...args, gen);
    const fromStore = await cli(...args, '--from-store', '--suite', 'gen');
    expect(fromFile.code).toBe(1);
    expect(fromStore.code).toBe(1);
    expect(JSON.parse(fromStore.stdout)).toEqual(JSON.parse(fromFile.stdout));
  });

  it('export trials writes the flat format back: reading the export gives the same report', async () => {
    const out = join(dir, 'export.jsonl');
    const r = await cli('export', 'trials', '--suite', 'gen', '--out', out);
    expect(r.code, r.stderr).toBe(0);
    expect(await json('report', '--json', '--include-confirmation', out)).toEqual(
      await json('report', '--json', '--include-confirmation', gen),
    );
  });

  it('files and --from-store together, or neither, is bad input (exit 2)', async () => {
    expect((await cli('report', '--from-store', gen)).code).toBe(2);
    const none = await cli('report');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--from-store');
  });
});
