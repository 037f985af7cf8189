import { z } from 'zod';
import { PipelineError } from './errors.ts';

/**
 * How often and how patiently to retry: data, passed in (tests pass `initialMs: 0`). The one policy
 * of every retrying part: the SDK's batcher, the runner, the importers and the ClickHouse sink.
 */
export const RetryPolicy = z.object({
  /** Retries after the first try; 0 = try once. */
  retries: z.number().int().nonnegative(),
  /** Wait before the first retry, ms. */
  initialMs: z.number().nonnegative(),
  /** Each wait is the previous one times `factor`. */
  factor: z.number().min(1),
  /** No wait is longer than this, ms. */
  maxMs: z.number().nonnegative(),
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/** The default of every part that retries: 5 retries, 100 ms doubling up to 5 s (about 3 s of patience in all). */
export const DEFAULT_RETRY: RetryPolicy = { retries: 5, initialMs: 100, factor: 2, maxMs: 5_000 };

/** Only errors that say a retry can help are retried; anything else is a bug or a refusal. */
export const isRetriable = (e: unknown): boolean => e instanceof PipelineError && e.retriable;

/**
 * The wait before retry number `retry` (0-based): `initialMs × factor^retry`, capped at `maxMs`. With
 * `random` (e.g. Math.random), jittered into [50 %, 100 %] of that, so many writers do not retry in step.
 */
export const backoffMs = (policy: RetryPolicy, retry: number, random?: () => number): number => {
  const wait = Math.min(policy.maxMs, policy.initialMs * policy.factor ** retry);
  return random === undefined ? wait : wait * (0.5 + random() / 2);
};

export const sleep = (ms: number): Promise<void> =>
  ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));

export interface RetryOptions {
  readonly policy: RetryPolicy;
  readonly retriable?: (e: unknown) => boolean;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly onRetry?: (info: { error: unknown; retry: number; waitMs: number }) => void;
}

/** Runs `fn`, retrying retriable failures by the policy; the last error is rethrown as it was. */
export const withRetry = async <T>(fn: (tryNo: number) => Promise<T>, opts: RetryOptions): Promise<T> => {
  const retriable = opts.retriable ?? isRetriable;
  const wait = opts.sleep ?? sleep;
  for (let tryNo = 0; ; tryNo++) {
    try {
      return await fn(tryNo);
    } catch (error) {
      if (tryNo >= opts.policy.retries || !retriable(error)) throw error;
      const waitMs = backoffMs(opts.policy, tryNo);
      opts.onRetry?.({ error, retry: tryNo, waitMs });
      await wait(waitMs);
    }
  }
};
