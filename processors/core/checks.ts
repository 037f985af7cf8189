import type { Interval } from './intervals.ts';
import { wilson } from './intervals.ts';
import type { CheckAnswer } from './rowState.ts';
import { flippingChecks, tallyCheck, type ReportRow, type RowSummary } from './rowSummary.ts';

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
const checkNames = (rows: readonly Pick<ReportRow, 'checks'>[]): string[] => [
  ...new Set(rows.flatMap((r) => r.checks.map((s) => s.name))),
];

export const checkStability = (rows: readonly ReportRow[], confidence: number): CheckStability[] => {
  // one pass, names in first appearance; a row's checks are one per name (the first one counts)
  const counts = new Map<string, { rows: number; flips: number }>();
  for (const r of rows) {
    // a set of the names seen only when a row has two checks or more (most rows have one or none)
    const seen = r.checks.length > 1 ? new Set<string>() : undefined;
    for (const s of r.checks) {
      let count = counts.get(s.name);
      if (!count) counts.set(s.name, (count = { rows: 0, flips: 0 }));
      if (seen) {
        if (seen.has(s.name)) continue;
        seen.add(s.name);
      }
      const t = tallyCheck(s);
      if (t.repeated) count.rows++;
      if (t.flips) count.flips++;
    }
  }
  return [...counts].map(([name, { rows: answered, flips }]) => ({
    name,
    rows: answered,
    flipping_rows: flips,
    flip_rate: answered > 0 ? flips / answered : null,
    interval: wilson(flips, answered, confidence),
  }));
};

/** Rows whose verdict is stable (all right or all wrong) while a check underneath it flips. */
export const hiddenCheckFlips = (rows: readonly ReportRow[]): HiddenCheckFlip[] => {
  const found: HiddenCheckFlip[] = [];
  for (const r of rows) {
    if ((r.class !== 'stable_correct' && r.class !== 'stable_wrong') || r.checks.length === 0) continue;
    const checks = flippingChecks(r);
    if (checks.length > 0) found.push({ row_id: r.row_id, class: r.class, checks });
  }
  return found;
};

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
export const firstDivergentCheck = (
  baseline: Pick<RowSummary, 'checks'>,
  candidate: Pick<RowSummary, 'checks'>,
): Divergence | null => {
  const names = checkNames([baseline, candidate]);
  for (const [position, name] of names.entries()) {
    const b = tally(baseline.checks.find((s) => s.name === name)?.answers ?? []);
    const c = tally(candidate.checks.find((s) => s.name === name)?.answers ?? []);
    if (answerSet(b) !== answerSet(c)) return { check: name, position: position + 1, baseline: b, candidate: c };
  }
  return null;
};
