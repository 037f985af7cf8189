import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildReport, DEFAULT_REPORT_OPTIONS, groupTrials } from '../../processors/core/index.ts';
import { readTrialFiles } from './readTrialFiles.ts';

// The public file, byte for byte (examples/public-trials/README.md).
const TAU_BENCH = fileURLToPath(new URL('../../examples/public-trials/tau_bench.jsonl', import.meta.url));

describe("τ-bench's README leaderboard, reproduced from the raw trials", async () => {
  const { trials } = await readTrialFiles([TAU_BENCH]);
  const { groups } = buildReport(groupTrials(trials), DEFAULT_REPORT_OPTIONS);
  const group = (suite: string) => groups.find((g) => g.suite === suite && g.agent_version === 'gpt-4o')!;
  const at3 = (xs: Record<string, number | null>) => Object.values(xs).map((x) => x!.toFixed(3));

  it('gpt-4o airline pass^1..4 = 0.420 / 0.273 / 0.220 / 0.200', () => {
    const g = group('airline');
    expect(g).toMatchObject({ rows: 50, trials: 200, ungraded: 0, k_max: 4 });
    expect(at3(g.pass_hat_k)).toEqual(['0.420', '0.273', '0.220', '0.200']);
  });

  it('gpt-4o retail pass^1..4 = 0.604 / 0.491 / 0.430 / 0.383', () => {
    const g = group('retail');
    expect(g).toMatchObject({ rows: 115, trials: 460, ungraded: 0, k_max: 4 });
    expect(at3(g.pass_hat_k)).toEqual(['0.604', '0.491', '0.430', '0.383']);
  });

  it('pass@1 equals mean accuracy when every task has the same number of trials', () => {
    for (const g of groups) expect(g.pass_at_1).toBeCloseTo(g.mean_accuracy!, 12);
  });
});
