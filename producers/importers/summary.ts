import { passCurves } from '../../processors/core/estimators.ts';
import { KEY_SEP } from '../../schemas/topics.ts';

export interface TrialOutcome {
  readonly suite: string;
  readonly agent: { readonly version: string };
  readonly row_id: string;
  readonly passed: boolean | null;
  readonly score?: number | null | undefined;
}

export interface ImportSummary {
  readonly suite: string;
  readonly agentVersion: string;
  readonly rows: number;
  readonly trials: number;
  readonly passed: number;
  readonly failed: number;
  readonly ungraded: number;
  /** pass^k averaged over rows, index k−1, for k up to the fewest graded attempts of any row. */
  readonly passHat: number[];
  /**
   * The mean score of the graded trials that have one (Inspect's headline `mean`, which counts partial credit P as
   * 0.5; τ-bench's and τ²'s average reward); undefined when none has a score.
   */
  readonly meanScore?: number;
}

/** Per (suite, agent version): counts and the pass^k curve, to set beside the tool's own summary. */
export const summarize = (trials: readonly TrialOutcome[]): ImportSummary[] => {
  const acc = createSummary();
  for (const t of trials) acc.add(t);
  return acc.result();
};

/** `summarize`, one trial at a time: it keeps counts per row, never the trials. */
export const createSummary = () => {
  const groups = new Map<
    string,
    {
      suite: string;
      agent: string;
      rows: Map<string, { n: number; c: number }>;
      ungraded: number;
      trials: number;
      scoreSum: number;
      scored: number;
    }
  >();
  const add = (t: TrialOutcome): void => {
    const key = `${t.suite}${KEY_SEP}${t.agent.version}`;
    const g = groups.get(key) ?? {
      suite: t.suite,
      agent: t.agent.version,
      rows: new Map(),
      ungraded: 0,
      trials: 0,
      scoreSum: 0,
      scored: 0,
    };
    groups.set(key, g);
    g.trials++;
    const row = g.rows.get(t.row_id) ?? { n: 0, c: 0 };
    g.rows.set(t.row_id, row);
    if (t.passed === null) g.ungraded++;
    else {
      row.n++;
      if (t.passed) row.c++;
      if (typeof t.score === 'number') {
        g.scoreSum += t.score;
        g.scored++;
      }
    }
  };
  const result = (): ImportSummary[] =>
    [...groups.values()].map((g) => {
      const graded = [...g.rows.values()].filter((r) => r.n > 0);
      const maxK = graded.length ? graded.reduce((m, r) => Math.min(m, r.n), Infinity) : 0;
      const passHat = Array.from(
        { length: maxK },
        (_, i) => graded.reduce((sum, r) => sum + passCurves(r.n, r.c, maxK).passHat[i]!, 0) / graded.length,
      );
      const passed = graded.reduce((s, r) => s + r.c, 0);
      const gradedTrials = graded.reduce((s, r) => s + r.n, 0);
      return {
        suite: g.suite,
        agentVersion: g.agent,
        rows: g.rows.size,
        trials: g.trials,
        passed,
        failed: gradedTrials - passed,
        ungraded: g.ungraded,
        passHat,
        ...(g.scored > 0 ? { meanScore: g.scoreSum / g.scored } : {}),
      };
    });
  return { add, result };
};
