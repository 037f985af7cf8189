import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';

/**
 * A production window's sampling-weighted pass rate fell significantly below the offline pass@1 of
 * the same agent version (one-sided test on the Horvitz–Thompson estimate).
 */
export const WindowAlertRaised = z.object({
  ...envelope('WindowAlertRaised'),
  alert_id: Id,
  agent_version: Id,
  segment: z.string().min(1),
  grader: z.string().min(1),
  window: z.object({ size_ms: z.number().int().positive(), start: z.number().int(), end: z.number().int() }),
  /** Horvitz–Thompson (Hájek) pass rate, weights 1/probability, and its interval. */
  pass_rate: z.number().min(0).max(1),
  interval: z.tuple([z.number(), z.number()]),
  /** Sampled traces with a verdict in the window, and their summed weight (estimated volume). */
  sampled: z.number().int().nonnegative(),
  weight: z.number().nonnegative(),
  offline_pass_at_1: z.number().min(0).max(1),
  /** One-sided p-value of "production is below offline". */
  p_value: z.number().min(0).max(1),
  message: z.string(),
});
export type WindowAlertRaised = z.infer<typeof WindowAlertRaised>;
