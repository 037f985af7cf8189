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
  /**
   * pass^k, index k−1, for k up to the attempts every row was given (`attempts`): at each k, the mean over the rows
   * with at least k graded attempts (Inspect's rule: pass^3 over the samples that have 3 scored epochs).
   */
  readonly passHat: number[];
  /** Rows each k is averaged over, index k−1 (all graded rows until some row has fewer than k graded attempts). */
  readonly rowsAtK: number[];
  /**
   * The attempts the source gave every row: what the file declares (Inspect's `epochs`, τ²-bench's `num_trials`,
   * `declared`), else the fewest recorded, graded or not (when an epoch went unscored or a trial crashed), so one
   * unscored or missing epoch does not shorten the curve for every row (the report's `defaultK`).
   */
  readonly attempts: number;
  /** What the file declares each row was given (`ToolSource.declaredK`), when it does: `attempts` is at least this. */
  readonly declared?: number;
  /** Rows with fewer attempts recorded (graded or not) than declared: missing from the file. 0 without a declaration. */
  readonly short: number;
  /**
   * The mean score of the graded trials that have one (Inspect's headline `mean`, which counts partial credit P as
   * 0.5; τ-bench's and τ²'s average reward); undefined when none has a score.
   */
  readonly meanScore?: number;
}

/** Per (suite, agent version): counts and the pass^k curve, to set beside the tool's own summary. */
export const summarize = (trials: readonly TrialOutcome[], declared?: number): ImportSummary[] => {
  const acc = createSummary(declared);
  for (const t of trials) acc.add(t);
  return acc.result();
};

/** `summarize`, one trial at a time: it keeps counts per row, never the trials. */
export const createSummary = (declared?: number) => {
  const groups = new Map<
    string,
    {
      suite: string;
      agent: string;
      rows: Map<string, { n: number; c: number; recorded: number }>;
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
    const row = g.rows.get(t.row_id) ?? { n: 0, c: 0, recorded: 0 };
    g.rows.set(t.row_id, row);
    row.recorded++;
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
      // a loop, not Math.min(...): no argument per row
      let attempts = graded.length ? Infinity : 0;
      for (const r of graded) attempts = Math.min(attempts, r.recorded);
      if (graded.length > 0 && declared !== undefined) attempts = Math.max(attempts, declared);
      let short = 0;
      if (declared !== undefined) for (const r of g.rows.values()) if (r.recorded < declared) short++;
      const sums = new Array<number>(attempts).fill(0);
      const rowsAtK = new Array<number>(attempts).fill(0);
      for (const r of graded) {
        const hat = passCurves(r.n, r.c, attempts).passHat;
        hat.forEach((v, i) => {
          sums[i]! += v;
          rowsAtK[i]!++;
        });
      }
      // k where no row has k graded attempts has no value (every row lost an attempt): the curve stops before it
      while (rowsAtK.length > 0 && rowsAtK.at(-1) === 0) rowsAtK.pop();
      const passHat = rowsAtK.map((used, i) => sums[i]! / used);
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
        rowsAtK,
        attempts,
        ...(declared === undefined ? {} : { declared }),
        short,
        ...(g.scored > 0 ? { meanScore: g.scoreSum / g.scored } : {}),
      };
    });
  return { add, result };
};
