import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';

/** One source partition's share of one production window. Sums are additive across partitions. */
export const WindowShareRecord = z.object({
  agent_version: Id,
  segment: z.string().min(1),
  grader: z.string().min(1),
  size_ms: z.number().int().positive(),
  start: z.number().int(),
  /** Changes of this share so far. */
  seq: z.number().int().nonnegative(),
  closed: z.boolean(),
  graded: z.number().int().nonnegative(),
  ungraded: z.number().int().nonnegative(),
  /** Σw, Σw·y, Σw², Σw²·y over graded traces (w = 1/probability, y = 1 when passed). */
  w: z.number().nonnegative(),
  wy: z.number().nonnegative(),
  w2: z.number().nonnegative(),
  w2y: z.number().nonnegative(),
  /** Input fingerprints seen at least twice with a verdict, and those whose verdicts differ (flips). */
  repeated: z.number().int().nonnegative(),
  flipping: z.number().int().nonnegative(),
  /** Traces that arrived after this window closed (kept in the raw traces, not in the window). */
  late: z.number().int().nonnegative(),
});
export type WindowShareRecord = z.infer<typeof WindowShareRecord>;

/**
 * A snapshot of one source partition of passk.traces: its share of every production window it
 * still keeps, at one position (the first stage of a two-stage aggregate: traces are keyed by input
 * fingerprint, windows by agent version and segment). One record per partition in the compacted
 * passk.rowstate: the latest is all a restore needs, and the second stage sees every window of a
 * partition at the same position.
 */
export const TraceWindowsUpdated = z.object({
  ...envelope('TraceWindowsUpdated'),
  source_partition: z.number().int().nonnegative(),
  /** Partitions of passk.traces: a window is final once every one of them has passed its end. */
  source_partitions: z.number().int().positive(),
  /** Position of the source partition the snapshot reflects: a restore skips what is before it. */
  through_offset: z.number().int().nonnegative(),
  /** The partition's event-time watermark (latest event time − allowed lateness). */
  watermark: z.number().int(),
  /** Windows ending before this were dropped from the snapshot (bounded size). */
  horizon: z.number().int(),
  shares: z.array(WindowShareRecord),
});
export type TraceWindowsUpdated = z.infer<typeof TraceWindowsUpdated>;
