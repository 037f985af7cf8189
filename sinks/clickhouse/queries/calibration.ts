import { z } from 'zod';
import {
  calibrateJudges,
  type JudgeCalibration,
  type JudgmentInput,
  type LabelInput,
} from '../../../processors/core/judges.ts';
import { any, select, type Querier } from './select.ts';

const Judgment = z.object({
  item_id: z.string(),
  judge_id: z.string(),
  judge_version: z.string().nullable(),
  judge_model: z.string().nullable(),
  rubric_version: z.string(),
  kind: z.enum(['pointwise', 'pairwise']),
  label: z.string().nullable(),
  score: z.number().nullable(),
  order: z.array(z.string()),
  has_order: z.boolean(),
  repeat: z.number().nullable(),
  output_length: z.number().nullable(),
});
const Label = z.object({
  item_id: z.string(),
  labeler: z.string(),
  label: z.string().nullable(),
  score: z.number().nullable(),
});

/**
 * The judge calibration table (agreement with humans and its interval, score correlation, position
 * swaps, self-consistency, verbosity bias) per (judge, judge version, rubric version), computed by
 * the core's `calibrateJudges` over the stored judgments and the human labels of the same items.
 */
export const judgeCalibration = async (
  client: Querier,
  opts: { judge_id?: string; rubric_version?: string; confidence?: number } = {},
): Promise<JudgeCalibration[]> => {
  const params = { judge_id: any(opts.judge_id), rubric_version: any(opts.rubric_version) };
  const where = `({judge_id:String} = '' OR judge_id = {judge_id:String}) AND ({rubric_version:String} = '' OR rubric_version = {rubric_version:String})`;
  const judgments = await select(
    client,
    Judgment,
    `SELECT item_id, judge_id, judge_version, judge_model, rubric_version, kind, label, score, \`order\`, has_order, \`repeat\`, output_length
     FROM judgments FINAL WHERE ${where} ORDER BY judge_id, rubric_version, item_id, occurred_at, event_id`,
    params,
  );
  const labels = await select(
    client,
    Label,
    `SELECT item_id, labeler, label, score FROM labels FINAL
     WHERE item_id IN (SELECT item_id FROM judgments FINAL WHERE ${where})
     ORDER BY item_id, occurred_at, event_id`,
    params,
  );
  const js: JudgmentInput[] = judgments.map((j) => ({
    item_id: j.item_id,
    judge: {
      id: j.judge_id,
      ...(j.judge_version === null ? {} : { version: j.judge_version }),
      ...(j.judge_model === null ? {} : { model: j.judge_model }),
    },
    rubric_version: j.rubric_version,
    kind: j.kind,
    label: j.label,
    score: j.score,
    ...(j.has_order ? { order: j.order } : {}),
    ...(j.repeat === null ? {} : { repeat: j.repeat }),
    ...(j.output_length === null ? {} : { output_length: j.output_length }),
  }));
  const ls: LabelInput[] = labels;
  return calibrateJudges(js, ls, opts.confidence ?? 0.95);
};
