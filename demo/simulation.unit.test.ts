import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BASELINE, CANDIDATE, FIXED, simulateTrial, type AgentVersion } from './agents.ts';
import { DATASET_FILE, DEMO_SEED, loadDemoDataset, type DemoRow } from './dataset/demoRow.ts';
import { generateDataset, MUST_NOT_BREAK_MIN_USD, toJsonl } from './dataset/generate.ts';
import { findPlantedFailure, SAMPLING_POLICY, simulateProduction } from './production.ts';
import { CHECKS, hardChecks, parseRequest, policyChecks } from './refundPolicy.ts';

const rows = loadDemoDataset();
const attempts = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Verdicts of `version` on a row for the given attempts of one run (true = right). */
const verdicts = (
  version: AgentVersion,
  row: DemoRow,
  run: string,
  nums: readonly number[],
  seed = DEMO_SEED,
): boolean[] => nums.map((a) => simulateTrial(version, row.input, [run, a], seed).output === row.expected);
const classOf = (v: readonly boolean[]): 'stable_correct' | 'stable_wrong' | 'flip' =>
  v.every(Boolean) ? 'stable_correct' : v.every((x) => !x) ? 'stable_wrong' : 'flip';
const screen = (version: AgentVersion, row: DemoRow, seed = DEMO_SEED) =>
  classOf(verdicts(version, row, 'run-1', attempts(1, 3), seed));
const mean = (version: AgentVersion): number => {
  const all = rows.flatMap((r) => verdicts(version, r, 'run-1', attempts(1, 3)));
  return all.filter(Boolean).length / all.length;
};
const isMnb = (r: DemoRow): boolean => r.tags.includes('must_not_break');
const isPlanted = (r: DemoRow): boolean =>
  parseRequest(r.input).order.proof === 'cart_screenshot' && r.expected_checks.return_window === true;

/** The seed's step 7: baseline kept right on all attempts, and the candidate failed again on its confirmation runs. */
const confirmed = (row: DemoRow, seed = DEMO_SEED): boolean => {
  const b = [
    ...verdicts(BASELINE, row, 'run-1', attempts(1, 3), seed),
    ...verdicts(BASELINE, row, 'confirm', attempts(1, 6), seed),
  ];
  const c = verdicts(CANDIDATE, row, 'confirm', attempts(1, 6), seed);
  return b.every(Boolean) && c.some((x) => !x);
};

describe('the refund-review dataset', () => {
  it('is exactly what the seeded generator writes', () => {
    expect(readFileSync(DATASET_FILE, 'utf8')).toBe(toJsonl(generateDataset(DEMO_SEED)));
    expect(toJsonl(generateDataset(DEMO_SEED))).toBe(toJsonl(generateDataset(DEMO_SEED)));
  });

  it('has about 200 labeled rows, both decisions, and the three checks in order, labeled by the policy', () => {
    expect(rows).toHaveLength(200);
    expect(new Set(rows.map((r) => r.row_id)).size).toBe(200);
    const approvals = rows.filter((r) => r.expected === 'approve').length;
    expect(approvals).toBeGreaterThan(40);
    expect(approvals).toBeLessThan(160);
    for (const r of rows) {
      const truth = policyChecks(parseRequest(r.input).order);
      expect(Object.entries(r.expected_checks)).toEqual(CHECKS.map((name) => [name, truth[name]]));
      expect(r.expected).toBe(CHECKS.every((c) => truth[c]) ? 'approve' : 'deny');
    }
  });

  it('tags must-not-break rows up front, by a rule on the request alone: high-value refunds the policy denies', () => {
    const mnb = rows.filter(isMnb);
    expect(mnb.length).toBeGreaterThanOrEqual(10);
    for (const r of rows)
      expect(isMnb(r)).toBe(parseRequest(r.input).order.price_usd >= MUST_NOT_BREAK_MIN_USD && r.expected === 'deny');
  });
});

describe('the simulated agents', () => {
  it('are deterministic per attempt and stochastic across attempts', () => {
    const row = rows[0]!;
    expect(simulateTrial(BASELINE, row.input, ['run-1', 1])).toEqual(simulateTrial(BASELINE, row.input, ['run-1', 1]));
    const flipping = rows.filter((r) => screen(BASELINE, r) === 'flip');
    expect(flipping.length).toBeGreaterThan(0);
  });

  it('keep most rows consistently right or consistently wrong, and flip only on hard rows', () => {
    const classes = rows.map((r) => screen(BASELINE, r));
    expect(classes.filter((c) => c !== 'flip').length / rows.length).toBeGreaterThanOrEqual(0.85);
    expect(classes.filter((c) => c === 'stable_wrong').length).toBeGreaterThan(0);
    const hard = rows.filter((r) => hardChecks(parseRequest(r.input).order).size > 0);
    const easyFlips = rows.filter((r, i) => classes[i] === 'flip' && !hard.includes(r));
    expect(easyFlips).toEqual([]);
    expect(rows.filter((_, i) => classes[i] === 'flip').length / hard.length).toBeGreaterThan(0.1);
  });

  it('the candidate raises mean accuracy and pass^3 but breaks a few baseline-stable-correct rows, one of them must-not-break', () => {
    expect(mean(CANDIDATE)).toBeGreaterThan(mean(BASELINE) + 0.02);
    const sc = (v: AgentVersion) => rows.filter((r) => screen(v, r) === 'stable_correct').length;
    expect(sc(CANDIDATE)).toBeGreaterThan(sc(BASELINE));
    const regressed = rows.filter(
      (r) => screen(BASELINE, r) === 'stable_correct' && screen(CANDIDATE, r) !== 'stable_correct',
    );
    const planted = rows.filter(isPlanted);
    expect(planted).toHaveLength(4);
    expect(regressed).toEqual(expect.arrayContaining(planted));
    expect(regressed.length).toBeLessThan(10);
    const confirmedRows = regressed.filter((r) => confirmed(r));
    expect(confirmedRows).toEqual(expect.arrayContaining(planted));
    expect(confirmedRows.filter(isMnb)).toEqual(planted.filter(isMnb));
    expect(planted.filter(isMnb)).toHaveLength(1);
  });

  it('diverges first at proof of purchase on every planted regression, for any seed', () => {
    for (const seed of [DEMO_SEED, 1, 2, 3]) {
      for (const r of rows.filter(isPlanted)) {
        const b = simulateTrial(BASELINE, r.input, ['run-1', 1], seed).checks;
        const c = simulateTrial(CANDIDATE, r.input, ['run-1', 1], seed).checks;
        const first = CHECKS.find((_, i) => b[i]!.answer !== c[i]!.answer);
        expect(first).toBe('proof_of_purchase');
        expect(screen(BASELINE, r, seed)).toBe('stable_correct');
        expect(screen(CANDIDATE, r, seed)).toBe('stable_wrong');
      }
    }
  });

  it('the fix (prompt-v3) keeps every must-not-break row the baseline gets right', () => {
    for (const r of rows.filter((x) => isMnb(x) && screen(BASELINE, x) === 'stable_correct'))
      expect(classOf(verdicts(FIXED, r, 'run-1', attempts(1, 9)))).toBe('stable_correct');
  });
});

describe('simulated production traffic', () => {
  const start = Date.UTC(2026, 10, 29);
  const traffic = simulateProduction({ startMs: start });

  it('holds the planted failure: high value (always sampled), approved by the live version, denied by the policy and the fix', () => {
    const input = findPlantedFailure();
    const trace = traffic.find((t) => t.input === input);
    expect(trace).toMatchObject({
      segment: 'high_value',
      agent_version: BASELINE,
      output: 'approve',
      expected: 'deny',
    });
    expect(SAMPLING_POLICY.segments.high_value).toBe(1);
    const row: DemoRow = { row_id: 'prod', input, expected: 'deny', expected_checks: {}, tags: [] };
    expect(classOf(verdicts(BASELINE, row, 'run-1', attempts(1, 6)))).toBe('stable_wrong');
    expect(classOf(verdicts(FIXED, row, 'run-1', attempts(1, 6)))).toBe('stable_correct');
  });

  it('has repeated inputs that flip, and a dip late in the day', () => {
    const sampled = traffic.filter((t) => t.segment === 'high_value');
    const outputs = new Map<string, Set<string>>();
    for (const t of traffic) outputs.set(t.input, (outputs.get(t.input) ?? new Set()).add(t.output));
    expect([...outputs.values()].filter((s) => s.size > 1).length).toBeGreaterThan(0);
    const rate = (ts: typeof traffic) => ts.filter((t) => t.output === t.expected).length / ts.length;
    const late = traffic.filter((t) => t.at >= start + 18 * 3_600_000);
    const early = traffic.filter((t) => t.at < start + 18 * 3_600_000);
    expect(rate(late)).toBeLessThan(rate(early) - 0.05);
    expect(sampled.length).toBeGreaterThan(0);
  });
});
