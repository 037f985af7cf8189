import { z } from 'zod';
import { isNegativeFeedback } from '../../processors/core/failureSignals.ts';

const compiles = (source: string): boolean => {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
};

/**
 * A sampling policy, as data. Every trace gets an inclusion probability:
 *   - a trace matching an always-keep rule is kept with probability 1 (never dropped, never capped);
 *   - otherwise it is a candidate with probability `segments[segment] ?? rate` (independent draws);
 *   - with a cap, at most `cap.max` candidates per segment and time window are kept, chosen uniformly
 *     (a reservoir), and each kept one's probability is rate × max / candidates in that window.
 * So every sampled trace weighs 1 / probability in a Horvitz–Thompson (or Hájek) estimate.
 */
export const SamplingPolicy = z.object({
  /** Recorded on every sampled trace (with a hash of the whole policy). */
  name: z.string().min(1).default('default'),
  /** The uniform rate for segments without their own. @default 1 */
  rate: z.number().min(0).max(1).default(1),
  /** Stratified rates: segment → rate. */
  segments: z.record(z.string().min(1), z.number().min(0).max(1)).default({}),
  alwaysKeep: z
    .object({
      /** Traces that ended in an error. @default true */
      errors: z.boolean().default(true),
      /** Traces whose user signals hold negative feedback (thumbs down, low rating, a complaint). @default true */
      negativeFeedback: z.boolean().default(true),
      /** Traces with any of these tags. @default ['high_risk'] */
      tags: z.array(z.string().min(1)).default(['high_risk']),
    })
    .default({ errors: true, negativeFeedback: true, tags: ['high_risk'] }),
  /** Per-window caps: at most `max` sampled candidates per segment per `windowMs` of event time. */
  cap: z.object({ max: z.number().int().positive(), windowMs: z.number().int().positive() }).optional(),
  /**
   * Extra redaction patterns, name → regular expression (`{"ticket": "TCK-\\d{6}"}`): each match becomes `[NAME]`,
   * on every path this policy samples (`passk sample`, the OTLP receiver), after the default redactors.
   */
  redact: z
    .record(
      z.string().regex(/^[A-Za-z][\w-]*$/, 'a redactor name: letters, digits, _ and -'),
      z.string().min(1).refine(compiles, { message: 'not a valid regular expression' }),
    )
    .optional(),
});
export type SamplingPolicy = z.output<typeof SamplingPolicy>;
export type SamplingPolicyInput = z.input<typeof SamplingPolicy>;

export interface Candidate {
  readonly segment: string;
  readonly error_kind?: string | null;
  readonly user_signals?: Record<string, string | number | boolean>;
  readonly tags?: readonly string[];
}

/** The always-keep rule a trace matches, if any. */
export const alwaysKeepReason = (p: SamplingPolicy, c: Candidate): string | undefined => {
  if (p.alwaysKeep.errors && c.error_kind) return 'error';
  if (p.alwaysKeep.negativeFeedback && isNegativeFeedback(c.user_signals)) return 'negative_feedback';
  const tag = c.tags?.find((t) => p.alwaysKeep.tags.includes(t));
  return tag ? `tag:${tag}` : undefined;
};

export const rateOf = (p: SamplingPolicy, segment: string): number => p.segments[segment] ?? p.rate;
