import { describe, expect, it } from 'vitest';
import { BackendUnavailable, InvalidEvent } from './errors.ts';
import { backoffMs, withRetry } from './retry.ts';

describe('withRetry', () => {
  const policy = { retries: 4, initialMs: 100, factor: 3, maxMs: 1_000 };

  it('waits initialMs × factor^n, capped at maxMs', () => {
    expect([0, 1, 2, 3].map((n) => backoffMs(policy, n))).toEqual([100, 300, 900, 1_000]);
  });

  it('jitters a wait into [50 %, 100 %] of it when given a random source', () => {
    expect(backoffMs(policy, 1, () => 0)).toBe(150);
    expect(backoffMs(policy, 1, () => 0.5)).toBe(225);
    expect(backoffMs(policy, 3, () => 1)).toBe(1_000);
  });

  it('retries a retriable error up to `retries` times, with those waits', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = withRetry(
      async () => {
        calls++;
        throw new BackendUnavailable('down');
      },
      { policy, sleep: async (ms) => void waits.push(ms) },
    );
    await expect(result).rejects.toBeInstanceOf(BackendUnavailable);
    expect(calls).toBe(5);
    expect(waits).toEqual([100, 300, 900, 1_000]);
  });

  it('gives up at once on an error that is not retriable, or not a PipelineError', async () => {
    for (const error of [new InvalidEvent('bad'), new TypeError('bug')]) {
      let calls = 0;
      await expect(
        withRetry(
          async () => {
            calls++;
            throw error;
          },
          { policy, sleep: async () => {} },
        ),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
    }
  });
});
