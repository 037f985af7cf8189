import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { oneUseSweeper } from './kafkaLog.ts';

/** vitest's timers: the sweeps' waits are advanced, not waited (real 20 ms timers missed rounds at load 27). */
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('the one-use group sweeper', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('sweeps at once and once more later; start() twice is one start', async () => {
    let sweeps = 0;
    const s = oneUseSweeper(async () => (sweeps++, 0), 20, 4);
    s.start();
    s.start();
    expect(sweeps).toBe(1);
    await sleep(100);
    expect(sweeps).toBe(2);
    s.stop();
  });

  it('makes a sweep that failed again, up to its retries (a broker away at the second sweep left a group)', async () => {
    let sweeps = 0;
    // the first sweep finds nothing to do; the second one fails twice (its coordinator away), then succeeds
    const s = oneUseSweeper(
      async () => {
        sweeps++;
        if (sweeps === 2 || sweeps === 3) throw new Error('The coordinator is not available');
        return 0;
      },
      20,
      4,
    );
    s.start();
    await sleep(200);
    expect(sweeps).toBe(4);
    s.stop();
  });

  it('makes a sweep again while a dead member still holds a group (its session restarted with a new coordinator)', async () => {
    const busy = [1, 1, 1, 0]; // at once (held, not retried), later: held, held, then empty and deleted
    let sweeps = 0;
    const s = oneUseSweeper(async () => busy[sweeps++] ?? 0, 20, 4);
    s.start();
    await sleep(200);
    expect(sweeps).toBe(4);
    s.stop();
  });

  it('gives up after its retries, and stop() ends what is pending', async () => {
    let sweeps = 0;
    const failing = oneUseSweeper(
      async () => {
        sweeps++;
        throw new Error('down');
      },
      10,
      2,
    );
    failing.start();
    await sleep(200);
    expect(sweeps).toBe(6); // at once and later, each made 1 + 2 times
    let after = 0;
    const stopped = oneUseSweeper(async () => (after++, 1), 20, 2);
    stopped.start();
    stopped.stop();
    await sleep(80);
    expect(after).toBe(1);
  });

  it('again() makes one more round later (a delete of this process not confirmed), one pending at a time', async () => {
    let sweeps = 0;
    const s = oneUseSweeper(async () => (sweeps++, 0), 20, 4);
    s.again();
    s.again();
    expect(sweeps).toBe(0);
    await sleep(100);
    expect(sweeps).toBe(1);
    s.again();
    s.stop();
    await sleep(80);
    expect(sweeps).toBe(1);
  });
});
