import { DEFAULT_MIN_ATTEMPTS } from './classify.ts';

/**
 * The sequential release gate over must-not-break rows (docs/adaptive.md). It reads each row's graded
 * attempts on both versions as they accumulate and says, after every round, `fail`, `pass` or `open`
 * (with the attempts each version still needs):
 *
 * - fail as soon as one row is confirmed broken, by the same rule as the fixed gate: the candidate has
 *   failed it (with at least `minAttempts` graded attempts) and the baseline passed every attempt,
 *   including `confirmAttempts` confirmation attempts made after the suspicion;
 * - pass as soon as every row is classified: the baseline is not stable-correct on it (the rule does
 *   not bind), or the candidate passed `passAttempts` graded attempts in a row.
 *
 * `settle` gives the verdict when no more attempts will come (the budget is spent): the fixed gate's
 * rules over what was recorded, where an unclassifiable row is not a pass.
 */
export type SideCounts = { readonly n: number; readonly c: number };

export type GateRowInput = {
  readonly row_id: string;
  readonly baseline: SideCounts;
  /** The baseline's graded attempts made after the row became suspect (confirmation runs). */
  readonly baseline_confirmation: SideCounts;
  readonly candidate: SideCounts;
};

export type SequentialGateOptions = {
  /** @default 3 */
  readonly minAttempts: number;
  /** Baseline confirmation attempts a suspect row needs. @default 3 */
  readonly confirmAttempts: number;
  /** Candidate graded attempts, all passed, that classify a row as held. @default 8 (adaptive max-k) */
  readonly passAttempts: number;
};

export const DEFAULT_SEQUENTIAL_GATE: SequentialGateOptions = {
  minAttempts: DEFAULT_MIN_ATTEMPTS,
  confirmAttempts: 3,
  passAttempts: 8,
};

export type GateRowStatus =
  | 'ok'
  | 'not_covered'
  | 'broken'
  /** the candidate failed it: the baseline's confirmation attempts decide */
  | 'suspect'
  | 'open';

export type GateRowState = {
  row_id: string;
  status: GateRowStatus;
  /** More graded attempts this row needs on each version before it can be decided. */
  needs: { baseline: number; candidate: number };
};

export type SequentialVerdict = {
  verdict: 'pass' | 'fail' | 'open';
  rows: GateRowState[];
  broken: string[];
};

export const gateRowState = (r: GateRowInput, o: SequentialGateOptions): GateRowState => {
  const none = { baseline: 0, candidate: 0 };
  const b = r.baseline;
  const cand = r.candidate;
  if (b.c < b.n) return { row_id: r.row_id, status: 'not_covered', needs: none };
  const candidateFailed = cand.c < cand.n;
  if (candidateFailed && cand.n >= o.minAttempts) {
    const confirmed = r.baseline_confirmation.n >= o.confirmAttempts && b.n >= o.minAttempts;
    return confirmed
      ? { row_id: r.row_id, status: 'broken', needs: none }
      : {
          row_id: r.row_id,
          status: 'suspect',
          needs: {
            baseline: Math.max(o.confirmAttempts - r.baseline_confirmation.n, o.minAttempts - b.n),
            candidate: 0,
          },
        };
  }
  const needs = {
    baseline: Math.max(0, o.minAttempts - b.n),
    candidate: candidateFailed ? o.minAttempts - cand.n : Math.max(0, o.passAttempts - cand.n),
  };
  return {
    row_id: r.row_id,
    status: needs.baseline === 0 && needs.candidate === 0 ? 'ok' : 'open',
    needs,
  };
};

export const sequentialGate = (rows: readonly GateRowInput[], o: SequentialGateOptions): SequentialVerdict => {
  const states = rows.map((r) => gateRowState(r, o));
  const broken = states.filter((s) => s.status === 'broken').map((s) => s.row_id);
  const verdict =
    broken.length > 0 ? 'fail' : states.every((s) => s.status === 'ok' || s.status === 'not_covered') ? 'pass' : 'open';
  return { verdict, rows: states, broken };
};

/**
 * The verdict once no more attempts will come: the fixed gate's seed rules over all attempts. A row
 * either version has not classified (fewer than `minAttempts`) fails the gate; a row stable-correct on
 * the baseline and failed on the candidate is broken.
 */
export const settleGate = (rows: readonly GateRowInput[], o: SequentialGateOptions): 'pass' | 'fail' =>
  rows.every((r) => {
    if (r.baseline.n < o.minAttempts || r.candidate.n < o.minAttempts) return false;
    return r.baseline.c < r.baseline.n || r.candidate.c === r.candidate.n;
  })
    ? 'pass'
    : 'fail';
