import { z } from 'zod';
import { envelope, Id, Tags } from '../envelope.ts';

export const Provenance = z.object({
  kind: z.enum(['manual', 'import', 'production_failure']),
  trace_id: z.string().optional(),
  failure_event_id: z.string().optional(),
  note: z.string().optional(),
});

/** A row added or changed; it lands in a new dataset version. */
export const DatasetRowUpserted = z.object({
  ...envelope('DatasetRowUpserted'),
  dataset_id: Id,
  dataset_version: Id,
  row_id: Id,
  input: z.string(),
  expected: z.string().nullable(),
  tags: Tags,
  provenance: Provenance,
});
export type DatasetRowUpserted = z.infer<typeof DatasetRowUpserted>;

/** A reviewer confirmed that a sampled production trace failed, and gave the expected result. */
export const FailureConfirmed = z.object({
  ...envelope('FailureConfirmed'),
  trace_id: Id,
  dataset_id: Id,
  input: z.string(),
  expected: z.string(),
  reviewer: z.string().min(1),
  note: z.string().optional(),
});
export type FailureConfirmed = z.infer<typeof FailureConfirmed>;
