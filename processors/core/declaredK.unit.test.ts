import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions } from './compare.ts';
import { declaredKOf, declaredRunsOf, type DeclaredRun } from './declaredK.ts';
import { groupTrials } from './groups.ts';
import { defaultK, histogramOf, summarizeHistogram } from './histogram.ts';
import { buildReport, DEFAULT_REPORT_OPTIONS, type ReportOptions } from './report.ts';
import { row } from './trials.testkit.ts';
import { versionPairs } from './versionPairs.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';

// The default K read from what the source declares (issue 27): a run's --k, Inspect's epochs, τ²-bench's num_trials.
const OPTS: ReportOptions = { ...DEFAULT_REPORT_OPTIONS, bootstrap: { reps: 200, seed: 1, confidence: 0.95 } };
const run = (version: string, k: number, run_id = 'run-1'): DeclaredRun => ({
  suite: 'refunds',
  dataset_version: 'ds-1',
  agent_version: version,
  run_id,
  k,
});
const report = (events: TrialRecorded[], opts: Partial<ReportOptions> = {}) =>
  buildReport(groupTrials(events), { ...OPTS, ...opts }).groups[0]!;

/** All k-subsets of a row's graded verdicts: the share where every one passes (pass^k by enumeration). */
const bruteHat = (verdicts: readonly boolean[], k: number): number => {
  let all = 0;
  let total = 0;
  const pick = (from: number, left: number, ok: boolean): void => {
    if (left === 0) {
      total++;
      if (ok) all++;
      return;
    }
    for (let i = from; i <= verdicts.length - left; i++) pick(i + 1, left - 1, ok && verdicts[i]!);
  };
  pick(0, k, true);
  return all / total;
};
const verdictsOf = (s: string): boolean[] => [...s].filter((v) => v !== '?').map((v) => v === '+');

describe('defaultK with a declaration', () => {
  it('is the larger of the declared and the fewest recorded, capped at the most graded', () => {
    const rows = fc.array(
      fc.record({ n: fc.integer({ min: 0, max: 6 }), u: fc.integer({ min: 0, max: 2 }), c: fc.nat() }),
      { minLength: 1, maxLength: 20 },
    );
    fc.assert(
      fc.property(rows, fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }), (rs, declared) => {
        const live = rs.filter((r) => r.n + r.u > 0).map((r) => ({ n: r.n, c: r.c % (r.n + 1), recorded: r.n + r.u }));
        const graded = live.filter((r) => r.n > 0);
        const expected =
          graded.length === 0
            ? 0
            : Math.min(
                Math.max(Math.min(...graded.map((r) => r.recorded)), declared ?? 0),
                Math.max(...graded.map((r) => r.n)),
              );
        expect(defaultK(histogramOf(live), declared)).toBe(expected);
        const s = summarizeHistogram(histogramOf(live), declared === undefined ? {} : { declared });
        expect(s.k_max).toBe(expected);
        expect(s.declared_k).toBe(declared ?? null);
      }),
    );
  });

  it("a group's declaration: the fewest its completed runs declared, confirmation runs and other groups left out", () => {
    const key = { suite: 'refunds', dataset_version: 'ds-1', agent_version: 'v1' };
    expect(declaredKOf(key, [])).toBeUndefined();
    expect(declaredKOf(key, [run('v1', 5), run('v1', 3, 'run-2'), run('v2', 1), run('v1', 2, 'confirm-1')])).toBe(3);
    const finished = (status: RunFinished['status'], k?: number) =>
      ({
        type: 'RunFinished',
        run_id: `r-${status}`,
        suite: 'refunds',
        dataset_version: 'ds-1',
        agent: { version: 'v1' },
        status,
        trials: 9,
        ...(k === undefined ? {} : { k }),
      }) as RunFinished;
    // a partial run did not give what it planned; a run without k declared nothing
    expect(declaredRunsOf([finished('partial', 5), finished('completed'), finished('completed', 3)])).toEqual([
      { ...key, run_id: 'r-completed', k: 3 },
    ]);
  });
});

describe('report: K read from the declaration', () => {
  // epochs: 3 declared; row b's third epoch is missing from the file altogether (not ungraded: absent)
  const events = [...row('a', 'v1', '+++'), ...row('b', 'v1', '++'), ...row('c', 'v1', '+-+')];

  it('an attempt missing from the file does not lower K, and the short row is counted', () => {
    // without a declaration: the fewest recorded, 2 (the old rule, kept where nothing is declared)
    expect(report(events)).toMatchObject({ k_max: 2, declared_k: null, rows_short: 0 });
    const out = report(events, { declared: [run('v1', 3)] });
    expect(out).toMatchObject({ k_max: 3, declared_k: 3, rows_short: 1, rows_at_k: { '1': 3, '2': 3, '3': 2 } });
    // pass^3 over a and c, each by enumerating its 3-subsets
    expect(out.pass_hat_k['3']).toBe((bruteHat(verdictsOf('+++'), 3) + bruteHat(verdictsOf('+-+'), 3)) / 2);
    expect(out.pass_hat_k['3']).toBe(0.5);
    // another version's, or a confirmation run's, declaration is not this one's
    expect(report(events, { declared: [run('v2', 3), run('v1', 3, 'confirm-7')] }).k_max).toBe(2);
  });

  it('more recorded than declared (two runs) still counts them; no k beyond the most graded', () => {
    const twice = [...events, ...row('a', 'v1', '+++', { run: 'run-2' }), ...row('c', 'v1', '+++', { run: 'run-2' })];
    expect(report(twice, { declared: [run('v1', 3), run('v1', 3, 'run-2')] }).k_max).toBe(3);
    const all = [...row('a', 'v1', '++++++'), ...row('b', 'v1', '+++++-')];
    expect(report(all, { declared: [run('v1', 3)] })).toMatchObject({ k_max: 6, rows_short: 0 });
    expect(report(events, { declared: [run('v1', 8)] })).toMatchObject({ k_max: 3, rows_short: 3 });
  });
});

describe("compare: the paired K is the report's K of both versions, the smaller", () => {
  const compare = (events: TrialRecorded[], opts: Partial<ReportOptions> = {}) =>
    compareVersions(versionPairs(groupTrials(events), 'v1', 'v2').both[0]!, { ...OPTS, ...opts });
  const V1 = { a: '+++', b: '++?', c: '+-+', d: '---' } as const;
  const V2 = { a: '+++', b: '+++', c: '++', d: '+-+' } as const;
  const events = (Object.keys(V1) as (keyof typeof V1)[]).flatMap((id) => [
    ...row(id, 'v1', V1[id]),
    ...row(id, 'v2', V2[id]),
  ]);

  it('an unscored attempt (v1, b) and a missing one (v2, c, 3 declared) do not lower it', () => {
    // undeclared: v1's K is 3 (b was given 3, one unscored), v2's is 2 (c has 2 recorded): pairs up to 2
    const counted = compare(events);
    expect([counted.baseline.k_max, counted.candidate.k_max, counted.paired.k_max]).toEqual([3, 2, 2]);
    const declared = compare(events, { declared: [run('v2', 3)] });
    expect([declared.baseline.k_max, declared.candidate.k_max, declared.paired.k_max]).toEqual([3, 3, 3]);
    // pairs at k = 3: a and d have 3 graded on both sides (b has 2 on v1, c has 2 on v2)
    const at3 = declared.paired.pass_hat_k['3']!;
    expect(at3.rows).toBe(2);
    const brute = (version: Record<string, string>) =>
      (bruteHat(verdictsOf(version.a!), 3) + bruteHat(verdictsOf(version.d!), 3)) / 2;
    expect(at3.baseline).toBe(brute(V1));
    expect(at3.candidate).toBe(brute(V2));
    expect(at3.delta).toBe(brute(V2) - brute(V1));
    // pass^2 over all four pairs, by enumeration too
    const at2 = declared.paired.pass_hat_k['2']!;
    const mean2 = (version: Record<string, string>) =>
      Object.values(version).reduce((s, v) => s + bruteHat(verdictsOf(v), 2), 0) / 4;
    expect(at2.rows).toBe(4);
    expect(at2.baseline).toBeCloseTo(mean2(V1), 15);
    expect(at2.candidate).toBeCloseTo(mean2(V2), 15);
    // --k still sets it
    expect(compare(events, { k: 1, declared: [run('v2', 3)] }).paired.k_max).toBe(1);
  });
});
