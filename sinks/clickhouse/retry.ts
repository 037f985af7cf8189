/** Retry policy as data (STYLE §7). Tests pass `initialMs: 0`. */
export interface RetryPolicy {
  /** Retries after the first try. @default 8 */
  readonly retries: number;
  /** @default 100 */
  readonly initialMs: number;
  /** @default 2 */
  readonly factor: number;
  /** @default 10000 */
  readonly maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 8, initialMs: 100, factor: 2, maxMs: 10_000 };

/** Delay before retry number `attempt` (0-based): exponential, capped, with jitter in [50 %, 100 %]. */
export const backoffMs = (p: RetryPolicy, attempt: number, random: () => number = Math.random): number =>
  Math.min(p.maxMs, p.initialMs * p.factor ** attempt) * (0.5 + random() / 2);

export const sleep = (ms: number): Promise<void> =>
  ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));
