import type { Interval } from './intervals.ts';
import { wilson } from './intervals.ts';
import type { CheckAnswer } from './rowState.ts';
import { flippingChecks, type RowSummary } from './rowSummary.ts';

/**
 * Intermediate-check stability: a check can flip while the final verdict stays the same, and looking
 * only at the verdict hides that variation (the seed's step 3).
 */
export type CheckStability = {
  name: string;
  /** Rows where the check was answered on at least two counted attempts. */
  rows: number;
  /** Of those, rows whose answers differ across attempts. */
  flipping_rows: number;
  flip_rate: number | null;
  interval: Interval | null;
};

export type HiddenCheckFlip = { row_id: string; class: 'stable_correct' | 'stable_wrong'; checks: string[] };

/** Check names in the order the agent makes them: first appearance across rows. */
const checkNames = (rows: readonly RowSummary[]): string[] => [
  ...new Set(rows.flatMap((r) => r.checks.map((s) => s.name))),
];

export const checkStability = (rows: readonly RowSummary[], confidence: number): CheckStability[] => {
  const flipping = new Map(rows.map((r) => [r.row_id, new Set(flippingChecks(r))]));
  return checkNames(rows).map((name) => {
    const answered = rows.filter((r) => (r.checks.find((s) => s.name === name)?.answers.length ?? 0) >= 2);
    const flips = answered.filter((r) => flipping.get(r.row_id)?.has(name)).length;
    return {
      name,
      rows: answered.length,
      flipping_rows: flips,
      flip_rate: answered.length > 0 ? flips / answered.length : null,
      interval: wilson(flips, answered.length, confidence),
    };
  });
};

/** Rows whose verdict is stable (all right or all wrong) while a check underneath it flips. */
export const hiddenCheckFlips = (rows: readonly RowSummary[]): HiddenCheckFlip[] =>
  rows.flatMap((r) => {
    if (r.class !== 'stable_correct' && r.class !== 'stable_wrong') return [];
    const checks = flippingChecks(r);
    return checks.length > 0 ? [{ row_id: r.row_id, class: r.class, checks }] : [];
  });

export type AnswerCount = { answer: CheckAnswer; count: number };
export type Divergence = { check: string; position: number; baseline: AnswerCount[]; candidate: AnswerCount[] };

const tally = (answers: readonly CheckAnswer[]): AnswerCount[] => {
  const counts = new Map<string, AnswerCount>();
  for (const answer of answers) {
    const key = JSON.stringify(answer);
    const entry = counts.get(key) ?? { answer, count: 0 };
    entry.count++;
    counts.set(key, entry);
  }
  return [...counts.values()];
};

const answerSet = (counts: readonly AnswerCount[]): string =>
  JSON.stringify(counts.map((a) => JSON.stringify(a.answer)).sort());

/**
 * The first intermediate check, in the agent's order, whose set of answers differs between baseline
 * and candidate (a check answered on one side only also differs). Null when every check agrees.
 */
export const firstDivergentCheck = (baseline: RowSummary, candidate: RowSummary): Divergence | null => {
  const names = checkNames([baseline, candidate]);
  for (const [position, name] of names.entries()) {
    const b = tally(baseline.checks.find((s) => s.name === name)?.answers ?? []);
    const c = tally(candidate.checks.find((s) => s.name === name)?.answers ?? []);
    if (answerSet(b) !== answerSet(c)) return { check: name, position: position + 1, baseline: b, candidate: c };
  }
  return null;
};
