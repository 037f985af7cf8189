import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BASELINE, simulateTrial } from '../demo/agents.ts';
import { loadDemoDataset } from '../demo/dataset/demoRow.ts';
import { decide, parseRequest, policyChecks } from '../demo/refundPolicy.ts';
import { demoRows, plant, tauRows } from './adaptive.ts';

const TAU = fileURLToPath(new URL('../examples/public-trials/tau_bench.jsonl', import.meta.url));

describe('the adaptive bench rows', () => {
  it("τ-bench: gpt-4o's per-task pass rates, 5% must-not-break among tasks with p ≥ 0.75", () => {
    const rows = tauRows(TAU, 31);
    expect(rows).toHaveLength(165);
    // the README leaderboard's pass^1: airline 0.42, retail 0.604
    const mean = (d: string) => {
      const r = rows.filter((x) => x.row_id.startsWith(`${d}::`));
      return r.reduce((a, x) => a + x.p, 0) / r.length;
    };
    expect(mean('airline')).toBeCloseTo(0.42, 3);
    expect(mean('retail')).toBeCloseTo(0.604, 3);
    const mnb = rows.filter((r) => r.must_not_break);
    expect(mnb).toHaveLength(8);
    expect(mnb.every((r) => r.p >= 0.75)).toBe(true);
  });

  it("demo: each row's p is the simulated agent's pass rate (4,000 draws, within 4 SEs)", () => {
    const rows = demoRows();
    const data = loadDemoDataset();
    expect(rows.filter((r) => r.must_not_break)).toHaveLength(14);
    const flaky = rows.flatMap((r, i) => (r.p > 0.05 && r.p < 0.95 ? [i] : [])).slice(0, 3);
    expect(flaky.length).toBeGreaterThan(0);
    for (const i of [0, ...flaky]) {
      const { order } = parseRequest(data[i]!.input);
      const expected = decide(policyChecks(order));
      const N = 4_000;
      let pass = 0;
      for (let a = 0; a < N; a++) if (simulateTrial(BASELINE, data[i]!.input, ['bench', a]).output === expected) pass++;
      const p = rows[i]!.p;
      expect(Math.abs(pass / N - p)).toBeLessThanOrEqual(4 * Math.sqrt((p * (1 - p)) / N) + 1e-9);
    }
  });

  it('plants the regression on the first must-not-break row with p = 1', () => {
    const rows = demoRows();
    const planted = plant(rows, 0.8);
    const changed = planted.flatMap((r, i) => (r.p !== rows[i]!.p ? [i] : []));
    expect(changed).toHaveLength(1);
    expect(rows[changed[0]!]).toMatchObject({ must_not_break: true, p: 1 });
  });
});
