import { describe, expect, it } from 'vitest';
import { agreementStats } from './agreement.ts';
import { ranks, spearman, withinGroupCorrelation } from './correlation.ts';
import { calibrateJudges, type JudgmentInput, type LabelInput } from './judges.ts';

const J = { id: 'judge-a', version: '1' };
const point = (item_id: string, label: string | null, extra: Partial<JudgmentInput> = {}): JudgmentInput => ({
  item_id,
  judge: J,
  rubric_version: 'r1',
  kind: 'pointwise',
  label,
  ...extra,
});
const human = (item_id: string, label: string | null, score?: number): LabelInput => ({
  item_id,
  labeler: 'h1',
  label,
  ...(score === undefined ? {} : { score }),
});

describe('agreement and Cohen’s κ', () => {
  it('matches a worked example', () => {
    // 50 items: both yes 20, human yes/judge no 5, human no/judge yes 10, both no 15.
    const pairs = [
      ...Array(20).fill({ human: 'yes', judge: 'yes' }),
      ...Array(5).fill({ human: 'yes', judge: 'no' }),
      ...Array(10).fill({ human: 'no', judge: 'yes' }),
      ...Array(15).fill({ human: 'no', judge: 'no' }),
    ];
    const a = agreementStats(pairs);
    expect(a.agreement).toBe(0.7);
    // pe = 0.5·0.6 + 0.5·0.4 = 0.5 → κ = (0.7 − 0.5)/0.5 = 0.4
    expect(a.kappa).toBeCloseTo(0.4, 12);
    expect(a.confusion.matrix).toEqual({ no: { no: 15, yes: 10 }, yes: { no: 5, yes: 20 } });
    expect(a.per_class.yes).toEqual({ precision: 20 / 30, recall: 20 / 25, support: 25 });
  });
});

describe('correlations', () => {
  it('ranks ties by their average and computes Spearman', () => {
    expect(ranks([10, 20, 20, 30])).toEqual([1, 2.5, 2.5, 4]);
    expect(spearman([1, 2, 3, 4], [10, 20, 30, 40])).toBeCloseTo(1, 12);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBeCloseTo(-1, 12);
    expect(spearman([1, 1], [1, 2])).toBeNull();
  });
  it('within-group correlation ignores differences between groups', () => {
    // Inside each group, longer = higher score; across groups, the opposite.
    const g = [
      { xs: [1, 2, 3], ys: [10, 11, 12] },
      { xs: [101, 102, 103], ys: [0, 1, 2] },
    ];
    expect(withinGroupCorrelation(g)).toBeCloseTo(1, 12);
  });
});

describe('judge calibration', () => {
  const labels = [
    human('i1', 'pass', 5),
    human('i2', 'pass', 4),
    human('i3', 'fail', 1),
    human('i4', 'fail', 2),
    human('i5', 'fail'),
  ];
  const judgments = [
    point('i1', 'pass', { score: 5, output_length: 300 }),
    point('i2', 'pass', { score: 4, output_length: 100 }),
    point('i3', 'fail', { score: 2, output_length: 120 }),
    point('i4', 'pass', { score: 3, output_length: 500 }),
    point('i5', 'fail', { repeat: 0 }),
    point('i5', 'pass', { repeat: 1 }),
    point('i1', 'pass', { repeat: 1, score: 5 }),
  ];
  const [cal] = calibrateJudges(judgments, labels);

  it('agreement, κ and the confusion matrix use the first judgment of each item', () => {
    expect(cal!.agreement).toMatchObject({ items: 5, agreed: 4, agreement: 0.8 });
    expect(cal!.agreement.confusion.matrix.fail).toEqual({ fail: 2, pass: 1 });
  });

  it('scores: Spearman correlation and mean absolute error against human scores', () => {
    expect(cal!.scores.items).toBe(4);
    expect(cal!.scores.mae).toBeCloseTo((0 + 0 + 1 + 1) / 4, 12);
    expect(cal!.scores.spearman).toBeCloseTo(spearman([5, 4, 2, 3], [5, 4, 1, 2])!, 12);
  });

  it("self-consistency: the judge's own flip rate across repeats", () => {
    expect(cal!.self_consistency).toEqual({ items: 2, flagged: 1, rate: 0.5 });
  });

  it('verbosity bias: correlation of score with length within items sharing a human label', () => {
    expect(cal!.verbosity_bias.items).toBe(4);
    expect(cal!.verbosity_bias.by_label.pass!.correlation).toBeCloseTo(1, 12);
    expect(cal!.verbosity_bias.by_label.fail!.correlation).toBeCloseTo(1, 12);
    expect(cal!.verbosity_bias.correlation).toBeGreaterThan(0.9);
  });

  it('position swap: the same pair judged in both orders should prefer the same answer', () => {
    const pair = (item_id: string, order: string[], label: string): JudgmentInput => ({
      item_id,
      judge: J,
      rubric_version: 'r1',
      kind: 'pairwise',
      order,
      label,
    });
    const [p] = calibrateJudges(
      [
        pair('q1', ['A', 'B'], 'A'),
        pair('q1', ['B', 'A'], 'second'),
        pair('q2', ['A', 'B'], 'first'),
        pair('q2', ['B', 'A'], 'first'),
        pair('q3', ['A', 'B'], 'tie'),
      ],
      [human('q1', 'A'), human('q2', 'B')],
    );
    expect(p!.position_swap).toEqual({ items: 2, flagged: 1, rate: 0.5 });
    expect(p!.agreement).toMatchObject({ items: 2, agreed: 1 });
  });

  it('calibrates each judge version and rubric separately, and leaves tied human labels out', () => {
    const cals = calibrateJudges(
      [point('i1', 'pass'), { ...point('i1', 'fail'), judge: { id: 'judge-a', version: '2' } }],
      [human('i1', 'pass'), { ...human('i1', 'fail'), labeler: 'h2' }],
    );
    expect(cals.map((c) => c.judge.version)).toEqual(['1', '2']);
    expect(cals[0]!.human).toEqual({ items: 1, ambiguous: 1 });
    expect(cals[0]!.agreement.items).toBe(0);
  });
});
