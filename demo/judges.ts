import type { JudgmentInput, LabelInput } from '../producers/sdk/inputs.ts';
import { BASELINE, CANDIDATE } from './agents.ts';
import { DEMO_SEED } from './dataset/demoRow.ts';
import { rngFor } from './rng.ts';

/**
 * A simulated LLM judge that grades the explanation sent with each refund decision against a rubric
 * ("cites the policy clause that decided it, in plain words"), calibrated against a support lead's labels on the
 * same items. It has the biases the MT-Bench paper describes: it rewards longer explanations (verbosity) and, in
 * pairwise comparisons, prefers the answer it sees first on close calls (position); it also changes its mind
 * on a few repeats.
 */
export const JUDGE = { id: 'explanation-judge', version: '2026-11-02', model: 'sim-judge-1' } as const;
export const PAIRWISE_JUDGE = { id: 'preference-judge', version: '2026-11-02', model: 'sim-judge-1' } as const;
export const RUBRIC_VERSION = 'explanation-r3';
export const LABELER = 'support-lead';

export const simulateJudgments = (
  opts: { items?: number; pairs?: number; seed?: number } = {},
): { judgments: JudgmentInput[]; labels: LabelInput[] } => {
  const { items = 80, pairs = 40, seed = DEMO_SEED } = opts;
  const judgments: JudgmentInput[] = [];
  const labels: LabelInput[] = [];
  for (let i = 0; i < items; i++) {
    const r = rngFor(seed, 'judge-item', i);
    const item_id = `expl-${String(i + 1).padStart(3, '0')}`;
    const good = r() < 0.6;
    const length = Math.round(good ? 260 + r() * 260 : 140 + r() * 420);
    labels.push({ item_id, labeler: LABELER, label: good ? 'good' : 'bad', score: good ? 4 : 2 });
    // Long explanations read as thorough: a bad one of 400+ characters gets "good" far more often.
    const pGood = good ? 0.9 : length > 400 ? 0.55 : 0.12;
    for (let repeat = 0; repeat < 2; repeat++) {
      const says = rngFor(seed, 'judge-call', i, repeat)() < pGood ? 'good' : 'bad';
      judgments.push({
        item_id,
        judge: { ...JUDGE },
        rubric_version: RUBRIC_VERSION,
        kind: 'pointwise',
        label: says,
        score: says === 'good' ? 4 : 2,
        repeat,
        output_length: length,
      });
    }
  }
  for (let i = 0; i < pairs; i++) {
    const r = rngFor(seed, 'judge-pair', i);
    const item_id = `pair-${String(i + 1).padStart(3, '0')}`;
    const better = r() < 0.6 ? CANDIDATE : BASELINE;
    const close = r() < 0.15;
    labels.push({ item_id, labeler: LABELER, label: better });
    for (const order of [
      [BASELINE, CANDIDATE],
      [CANDIDATE, BASELINE],
    ]) {
      // On a close call the judge picks whichever answer it saw first.
      const picked = close
        ? order[0]!
        : rngFor(seed, 'pair-call', i, order[0]!)() < 0.95
          ? better
          : order.find((v) => v !== better)!;
      judgments.push({
        item_id,
        judge: { ...PAIRWISE_JUDGE },
        rubric_version: RUBRIC_VERSION,
        kind: 'pairwise',
        order: [...order],
        label: picked === order[0] ? 'first' : 'second',
        repeat: 0,
      });
    }
  }
  return { judgments, labels };
};
