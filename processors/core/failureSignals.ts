import type { TraceSampled } from '../../schemas/events/index.ts';

/**
 * Whether a sampled production trace looks like a failure, and why: pure functions of the event, shared by the
 * sampler (which keeps negative feedback), the review loop and the dashboard (which list the failures).
 */

/** Signals that count as negative feedback: thumbs down, dislike, a rating of 2 or less (of 5), a complaint. */
export const isNegativeFeedback = (signals: Record<string, string | number | boolean> | undefined): boolean => {
  if (!signals) return false;
  for (const [key, value] of Object.entries(signals)) {
    const k = key.toLowerCase();
    if (typeof value === 'string' && /^(thumbs?[_ -]?down|down|negative|dislike|bad|complaint)$/i.test(value.trim()))
      return true;
    if (/thumbs?[_ -]?down|dislike|complaint|negative/.test(k) && value !== false && value !== 0 && value !== '')
      return true;
    if (/thumbs?[_ -]?up|like|helpful/.test(k) && (value === false || value === 0)) return true;
    if (/rating|score|stars/.test(k) && typeof value === 'number' && value <= 2) return true;
  }
  return false;
};

/** The reasons a trace may be a failure, or none. */
export const failureSignals = (t: Pick<TraceSampled, 'verdicts' | 'error_kind' | 'user_signals'>): string[] => [
  ...(t.verdicts ?? []).filter((v) => v.passed === false).map((v) => `grader:${v.grader}`),
  ...(t.error_kind ? [`error:${t.error_kind}`] : []),
  ...(isNegativeFeedback(t.user_signals) ? ['negative_feedback'] : []),
];
