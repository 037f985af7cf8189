import type { JudgmentRecorded, LabelRecorded } from '../../schemas/events/judgments.ts';
import { agreementStats, type Agreement } from './agreement.ts';
import { pearson, spearman, withinGroupCorrelation } from './correlation.ts';
import { wilson, type Interval } from './intervals.ts';

/**
 * Judge calibration against human labels on the same items, one calibration per (judge id, judge
 * version, rubric version). A pairwise judge's label names the preferred answer (one of `order`, or
 * "tie"); "first"/"second" are read through `order`. The judge's verdict on an item is its first
 * judgment: the first order seen, lowest repeat — the single call a deployed judge would make.
 */
export type JudgmentInput = Pick<
  JudgmentRecorded,
  'item_id' | 'judge' | 'rubric_version' | 'kind' | 'label' | 'score' | 'order' | 'repeat' | 'output_length'
>;
export type LabelInput = Pick<LabelRecorded, 'item_id' | 'labeler' | 'label' | 'score'>;

/** Items checked, items flagged (inconsistent), and the share flagged. */
export type Rate = { items: number; flagged: number; rate: number | null };

export type JudgeCalibration = {
  judge: { id: string; version: string | null; rubric_version: string };
  items: number;
  /** Judged items with a human label; `ambiguous` = human labels tied, left out of agreement. */
  human: { items: number; ambiguous: number };
  agreement: Agreement & { interval: Interval | null };
  scores: { items: number; spearman: number | null; mae: number | null };
  position_swap: Rate;
  self_consistency: Rate;
  verbosity_bias: {
    items: number;
    correlation: number | null;
    by_label: Record<string, { items: number; correlation: number | null }>;
  };
};

type Human = { label: string | null; ambiguous: boolean; score: number | null };

const groupBy = <T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> => {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const g = m.get(k);
    if (g) g.push(x);
    else m.set(k, [x]);
  }
  return m;
};
const mean = (xs: readonly number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The judge's verdict: its label (pairwise: the preferred answer's id), or its score when unlabelled. */
const verdictOf = (j: JudgmentInput): string | number | null => {
  const label = j.label ?? null;
  if (j.kind === 'pairwise' && j.order && (label === 'first' || label === 'second'))
    return j.order[label === 'first' ? 0 : 1] ?? label;
  return label ?? j.score ?? null;
};
const orderKey = (j: JudgmentInput): string => JSON.stringify(j.order ?? []);
const lowestRepeat = (js: readonly JudgmentInput[]): JudgmentInput =>
  [...js].sort((a, b) => (a.repeat ?? 0) - (b.repeat ?? 0))[0]!;
const disagree = (js: readonly JudgmentInput[]): boolean =>
  new Set(js.map((j) => JSON.stringify(verdictOf(j)))).size > 1;

/** Majority human label per item (a tie makes it ambiguous) and the mean human score. */
const humanViews = (labels: readonly LabelInput[]): Map<string, Human> => {
  const out = new Map<string, Human>();
  for (const [item, ls] of groupBy(labels, (l) => l.item_id)) {
    const votes = [
      ...groupBy(
        ls.flatMap((l) => (l.label == null ? [] : [l.label])),
        (l) => l,
      ),
    ].sort((a, b) => b[1].length - a[1].length);
    const ambiguous = votes.length > 1 && votes[0]![1].length === votes[1]![1].length;
    out.set(item, {
      label: ambiguous ? null : (votes[0]?.[0] ?? null),
      ambiguous,
      score: mean(ls.flatMap((l) => (l.score == null ? [] : [l.score]))),
    });
  }
  return out;
};

const rate = (groups: readonly JudgmentInput[][]): Rate => {
  const flagged = groups.filter(disagree).length;
  return { items: groups.length, flagged, rate: groups.length ? flagged / groups.length : null };
};

type Item = { id: string; first: JudgmentInput; orders: JudgmentInput[][]; human: Human | undefined };

const agreementOf = (items: readonly Item[], confidence: number): JudgeCalibration['agreement'] => {
  const pairs = items.flatMap(({ id, first, human }) => {
    const v = verdictOf(first);
    return human?.label != null && first.label != null && v !== null
      ? [{ human: human.label, judge: String(v), item: id }]
      : [];
  });
  const a = agreementStats(pairs);
  return { ...a, interval: wilson(a.agreed, a.items, confidence) };
};

const scoresOf = (items: readonly Item[]): JudgeCalibration['scores'] => {
  const xy = items.flatMap(({ first, human }) =>
    first.score != null && human?.score != null ? [[first.score, human.score] as const] : [],
  );
  return {
    items: xy.length,
    spearman: spearman(
      xy.map((p) => p[0]),
      xy.map((p) => p[1]),
    ),
    mae: mean(xy.map(([x, y]) => Math.abs(x - y))),
  };
};

/** Score against output length, within items that share a human label (pooled and per label). */
const verbosityOf = (items: readonly Item[]): JudgeCalibration['verbosity_bias'] => {
  const points = items.flatMap(({ first, human }) =>
    first.kind === 'pointwise' && first.score != null && first.output_length != null && human?.label != null
      ? [{ label: human.label, x: first.output_length, y: first.score }]
      : [],
  );
  const groups = [...groupBy(points, (p) => p.label)].map(([label, ps]) => ({
    label,
    xs: ps.map((p) => p.x),
    ys: ps.map((p) => p.y),
  }));
  return {
    items: points.length,
    correlation: withinGroupCorrelation(groups),
    by_label: Object.fromEntries(
      groups.map((g) => [g.label, { items: g.xs.length, correlation: pearson(g.xs, g.ys) }]),
    ),
  };
};

const calibrateOne = (
  js: readonly JudgmentInput[],
  human: Map<string, Human>,
  confidence: number,
): JudgeCalibration => {
  const items: Item[] = [...groupBy(js, (j) => j.item_id)].map(([id, g]) => {
    const orders = [...groupBy(g, orderKey).values()];
    return { id, orders, first: lowestRepeat(orders[0]!), human: human.get(id) };
  });
  const j0 = js[0]!;
  return {
    judge: { id: j0.judge.id, version: j0.judge.version ?? null, rubric_version: j0.rubric_version },
    items: items.length,
    human: { items: items.filter((i) => i.human).length, ambiguous: items.filter((i) => i.human?.ambiguous).length },
    agreement: agreementOf(items, confidence),
    scores: scoresOf(items),
    // The same pair shown in both orders: the first judgment in each order should prefer the same answer.
    position_swap: rate(
      items.filter((i) => i.first.kind === 'pairwise' && i.orders.length > 1).map((i) => i.orders.map(lowestRepeat)),
    ),
    // Repeats of the same item in the same order: the judge's own flip rate.
    self_consistency: rate(items.flatMap((i) => i.orders.filter((o) => o.length > 1))),
    verbosity_bias: verbosityOf(items),
  };
};

export const calibrateJudges = (
  judgments: readonly JudgmentInput[],
  labels: readonly LabelInput[],
  confidence = 0.95,
): JudgeCalibration[] => {
  const human = humanViews(labels);
  const byJudge = groupBy(judgments, (j) => JSON.stringify([j.judge.id, j.judge.version ?? null, j.rubric_version]));
  return [...byJudge.keys()].sort().map((k) => calibrateOne(byJudge.get(k)!, human, confidence));
};
