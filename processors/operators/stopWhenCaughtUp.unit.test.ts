import { describe, expect, it } from 'vitest';
import { createInFlight } from './inFlight.ts';
import { stopWhenCaughtUp } from './stopWhenCaughtUp.ts';

describe('stopWhenCaughtUp', () => {
  it('resolves once nothing is in flight and every partition’s lag is zero', async () => {
    const lags = [
      [{ topic: 't', partition: 0, lag: 3 }],
      [{ topic: 't', partition: 0, lag: 1 }],
      [{ topic: 't', partition: 0, lag: 0 }],
    ];
    let asked = 0;
    const consumer = { lag: async () => lags[Math.min(asked++, lags.length - 1)]! };
    await expect(
      stopWhenCaughtUp(consumer, createInFlight(10), { everyMs: 1, stop: new Promise(() => {}) }),
    ).resolves.toBe('caught-up');
    expect(asked).toBe(3);
  });

  it('does not ask for lag while records are in flight, and yields to an explicit stop', async () => {
    const inFlight = createInFlight(10);
    inFlight.acquire(1);
    let asked = 0;
    const consumer = { lag: async () => (asked++, []) };
    let stop!: (v: string) => void;
    const done = stopWhenCaughtUp(consumer, inFlight, { everyMs: 1, stop: new Promise<string>((r) => (stop = r)) });
    stop('sigterm');
    await expect(done).resolves.toBe('sigterm');
    expect(asked).toBe(0);
  });
});
