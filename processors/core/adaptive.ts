import { bootstrapMeans, type BootstrapOptions } from './bootstrap.ts';
import { classWith, DEFAULT_MIN_ATTEMPTS, type StabilityClass } from './classify.ts';
import { passAtK, passHatK } from './estimators.ts';
import type { Interval } from './intervals.ts';
import type { ContinueReason, RowDecision, StopReason } from '../../schemas/events/adaptive.ts';

/**
 * Adaptive attempts (docs/adaptive.md). A run goes in rounds. Round 0 is a fixed first stage: `firstK`
 * graded attempts on every row; the headline pass@k / pass^k / flip rate come from it alone, so the
 * stopping rule cannot bias them. Every later round gives one more attempt to each row whose class, or
 * whose part in the gate, is still uncertain (must-not-break rows first), until nothing is uncertain,
 * a row reaches `maxK` graded attempts, or the budget is spent. Each round's decisions are a record
 * (`AdaptiveRound`), so a run can be replayed and audited. Pure: no I/O, no clock, no randomness.
 */
export type AdaptiveOptions = {
  /** Graded attempts every row gets first; the headline estimators use these only. @default 2 */
  readonly firstK: number;
  /** Graded attempts at most per row; a passing must-not-break row runs to it. @default 8 */
  readonly maxK: number;
  /** Attempts at most in the whole run (graded or not), first stage included; null: no cap but maxK. */
  readonly budget: number | null;
  /** Graded attempts a row needs for a stability class (as everywhere else). @default 3 */
  readonly minAttempts: number;
};

export const DEFAULT_ADAPTIVE: AdaptiveOptions = {
  firstK: 2,
  maxK: 8,
  budget: null,
  minAttempts: DEFAULT_MIN_ATTEMPTS,
};

/** What the planner knows of one row: its role, attempts made (graded or not) and the graded ones' verdicts. */
export type AdaptiveRow = {
  readonly row_id: string;
  readonly must_not_break: boolean;
  /** Attempts made, ungraded ones included. */
  readonly attempts: number;
  /** Graded attempts. */
  readonly n: number;
  /** Passes among them. */
  readonly c: number;
};

/** Why a row goes on (`continue`) or stops; the record is the event's (schemas/events/adaptive.ts). */
export type { ContinueReason, RowDecision, StopReason };

/** One round's decisions: which rows get how many more attempts, and which stop (each row stops once). */
export type AdaptiveRound = {
  round: number;
  /** Attempts made before this round. */
  spent: number;
  budget: number | null;
  /** Attempts granted in this round, by row. */
  grants: { row_id: string; attempts: number }[];
  /** Rows going on, and rows stopping in this round. */
  decisions: RowDecision[];
  /** Nothing was granted: the run is over. */
  done: boolean;
};

/**
 * The class an adaptive run gives a row: a flip as soon as it has both a pass and a fail (whatever comes
 * next, it is not stable); otherwise the usual class (`classOf`), unclassified below `minAttempts`.
 */
export const adaptiveClass = (n: number, c: number, minAttempts: number): StabilityClass =>
  classWith(n, c, minAttempts, true);

/** The uncertainty that keeps a row going, or the reason it stops (budget aside). */
export const rowNeed = (
  r: AdaptiveRow,
  o: AdaptiveOptions,
): { go: ContinueReason; attempts: number } | { stop: StopReason } => {
  // an attempt that stays ungraded (infrastructure) is replaced, up to as many again as maxK
  if (r.n >= o.maxK || r.attempts >= 2 * o.maxK) return { stop: 'max_k' };
  if (r.n < o.firstK) return { go: 'first_stage', attempts: o.firstK - r.n };
  const failed = r.c < r.n;
  if (r.must_not_break) {
    if (failed && r.n >= o.minAttempts) return { stop: 'must_not_break_failed' };
    return { go: 'must_not_break_uncertain', attempts: 1 };
  }
  if (r.c > 0 && failed) return { stop: 'flip_seen' };
  if (r.n >= o.minAttempts) return { stop: 'classified' };
  return { go: 'class_uncertain', attempts: 1 };
};

const TIER: Record<ContinueReason, number> = { first_stage: 0, must_not_break_uncertain: 1, class_uncertain: 2 };

/**
 * The next round. `rows` are the rows still open (those stopped before are left out by the caller, or
 * passed in `stopped`); `spent` the attempts made so far. Rows are funded in priority order (first
 * stage, then must-not-break, then the others; fewer graded attempts first, then input order) while the
 * budget lasts; a row the budget cannot fund stops with reason `budget`. The attempts the open
 * must-not-break rows would still need to reach `maxK` are kept back from the other rows.
 */
export const planRound = (
  round: number,
  rows: readonly AdaptiveRow[],
  spent: number,
  o: AdaptiveOptions,
  /** The gate is decided (the sequential gate failed): every open row stops with reason `gate_decided`. */
  gateDecided = false,
): AdaptiveRound => {
  const decisions: RowDecision[] = [];
  if (gateDecided) {
    const stop = (row: AdaptiveRow): RowDecision => ({
      row_id: row.row_id,
      decision: 'stop',
      reason: 'gate_decided',
      n: row.n,
      c: row.c,
      attempts: row.attempts,
      class: adaptiveClass(row.n, row.c, o.minAttempts),
    });
    return { round, spent, budget: o.budget, grants: [], decisions: rows.map(stop), done: true };
  }
  const wants: { row: AdaptiveRow; go: ContinueReason; attempts: number; at: number }[] = [];
  rows.forEach((row, at) => {
    const need = rowNeed(row, o);
    if ('stop' in need)
      decisions.push({
        row_id: row.row_id,
        decision: 'stop',
        reason: need.stop,
        n: row.n,
        c: row.c,
        attempts: row.attempts,
        class: adaptiveClass(row.n, row.c, o.minAttempts),
      });
    else wants.push({ row, ...need, at });
  });
  wants.sort((a, b) => TIER[a.go] - TIER[b.go] || a.row.n - b.row.n || a.at - b.at);
  let left = o.budget === null ? Infinity : Math.max(0, o.budget - spent);
  // what the open must-not-break rows will still need after this round is kept from the other rows
  const reserve = wants.reduce((a, w) => a + (w.go === 'must_not_break_uncertain' ? o.maxK - w.row.n - 1 : 0), 0);
  const grants: AdaptiveRound['grants'] = [];
  for (const w of wants) {
    const { row } = w;
    const base = { row_id: row.row_id, n: row.n, c: row.c, attempts: row.attempts };
    if (left - (w.go === 'class_uncertain' ? reserve : 0) >= w.attempts) {
      left -= w.attempts;
      grants.push({ row_id: row.row_id, attempts: w.attempts });
      decisions.push({ ...base, decision: 'continue', reason: w.go });
    } else
      decisions.push({
        ...base,
        decision: 'stop',
        reason: 'budget',
        class: adaptiveClass(row.n, row.c, o.minAttempts),
      });
  }
  return { round, spent, budget: o.budget, grants, decisions, done: grants.length === 0 };
};

/**
 * The headline numbers of an adaptive run, from the first stage only: each row's first `firstK` graded
 * attempts (in attempt order). Those are drawn on every row before any stopping decision, so they are
 * an ordinary fixed-k sample and the fixed-k estimators stay unbiased: E[pass^k] = E[p^k],
 * E[pass@k] = 1 − E[(1−p)^k] for k ≤ firstK, E[flip] = E[1 − p^K − (1−p)^K] with K = firstK.
 * Rows with fewer than `firstK` graded attempts are left out (counted in `rows_short`).
 */
export type FirstStage = {
  first_k: number;
  rows: number;
  rows_short: number;
  pass_at_k: Record<string, number | null>;
  pass_hat_k: Record<string, number | null>;
  /** Share of rows whose first-stage attempts disagree: an estimate of E[1 − p^K − (1−p)^K]. */
  flip_rate: number | null;
  intervals: {
    pass_at_k: Record<string, Interval | null>;
    pass_hat_k: Record<string, Interval | null>;
    flip_rate: Interval | null;
  };
};

/** `verdicts`: each row's graded verdicts in attempt order (all of them; only the first `firstK` are read). */
export const firstStage = (
  verdicts: readonly (readonly boolean[])[],
  firstK: number,
  bootstrap: BootstrapOptions,
): FirstStage => {
  const full = verdicts.filter((v) => v.length >= firstK);
  const cs = full.map((v) => v.slice(0, firstK).filter(Boolean).length);
  const ks = Array.from({ length: firstK }, (_, i) => i + 1);
  const columns = [
    ...ks.map((k) => cs.map((c) => passAtK(firstK, c, k))),
    ...ks.map((k) => cs.map((c) => passHatK(firstK, c, k))),
    cs.map((c) => (c > 0 && c < firstK ? 1 : 0)),
  ];
  const mean = (col: number[]) => (col.length === 0 ? null : col.reduce((a, b) => a + b, 0) / col.length);
  const intervals = bootstrapMeans(columns, bootstrap);
  const byK = <T>(values: T[]) => Object.fromEntries(ks.map((k, i) => [String(k), values[i]!]));
  return {
    first_k: firstK,
    rows: full.length,
    rows_short: verdicts.length - full.length,
    pass_at_k: byK(columns.slice(0, firstK).map(mean)),
    pass_hat_k: byK(columns.slice(firstK, 2 * firstK).map(mean)),
    flip_rate: firstK < 2 ? null : mean(columns[2 * firstK]!),
    intervals: {
      pass_at_k: byK(intervals.slice(0, firstK)),
      pass_hat_k: byK(intervals.slice(firstK, 2 * firstK)),
      flip_rate: firstK < 2 ? null : intervals[2 * firstK]!,
    },
  };
};

/**
 * The first stage of a version's adaptive runs, from their rounds (`AdaptiveRoundDecided`: run id → `first_k`): the
 * smallest `first_k` of the runs given that have rounds; the default `--first-k` when none has. What `passk compare
 * --from-store`, `passk report --from-store`, `passk process` and the dashboard take an adaptive version's headline
 * numbers from (docs/adaptive.md).
 */
export const firstStageOfRuns = (
  runIds: Iterable<string>,
  rounds: ReadonlyMap<string, number>,
): { k: number; from: 'rounds' | 'default' } => {
  let k = Infinity;
  for (const id of runIds) {
    const first = rounds.get(id);
    if (first !== undefined && first < k) k = first;
  }
  return Number.isFinite(k) ? { k, from: 'rounds' } : { k: DEFAULT_ADAPTIVE.firstK, from: 'default' };
};
