import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';

/** A judge's verdict on one item. For pairwise judges, `order` is the order the answers were shown in. */
export const JudgmentRecorded = z.object({
  ...envelope('JudgmentRecorded'),
  item_id: Id,
  judge: z.object({ id: Id, version: z.string().optional(), model: z.string().optional() }),
  rubric_version: z.string().min(1),
  kind: z.enum(['pointwise', 'pairwise']),
  label: z.string().nullable().optional(),
  score: z.number().nullable().optional(),
  order: z.array(z.string()).optional(),
  repeat: z.number().int().nonnegative().optional(),
  output_length: z.number().int().nonnegative().optional(),
});
export type JudgmentRecorded = z.infer<typeof JudgmentRecorded>;

/** A human label on the same item a judge graded. */
export const LabelRecorded = z.object({
  ...envelope('LabelRecorded'),
  item_id: Id,
  labeler: z.string().min(1),
  label: z.string().nullable().optional(),
  score: z.number().nullable().optional(),
});
export type LabelRecorded = z.infer<typeof LabelRecorded>;
