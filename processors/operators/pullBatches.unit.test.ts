import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../ports.ts';
import { createInFlight } from './inFlight.ts';
import { pullBatches } from './pullBatches.ts';

const batch = (lastOffset: number, events = 10): EventBatch => ({
  topic: 't',
  partition: 0,
  lastOffset,
  highWatermark: 100,
  events: Array.from({ length: events }, () => ({}) as EventBatch['events'][number]),
});

/** An endless async source that counts how often it was pulled. */
const source = () => {
  const s = { pulls: 0 };
  const iterable: AsyncIterable<EventBatch> = {
    [Symbol.asyncIterator]: () => ({ next: async () => ({ done: false, value: batch(s.pulls++ * 10 + 9) }) }),
  };
  return { s, iterable };
};
const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('pullBatches', () => {
  it('pulls only while the in-flight window has room', async () => {
    const { s, iterable } = source();
    const inFlight = createInFlight(30);
    const seen: EventBatch[] = [];
    const sub = pullBatches(iterable, inFlight, new Promise(() => {})).subscribe((b) => seen.push(b));
    await ticks(20);
    expect(seen.length).toBe(3);
    expect(s.pulls).toBe(3);
    inFlight.release(10);
    await ticks(20);
    expect(seen.length).toBe(4);
    sub.unsubscribe();
  });

  it('on stop, completes once everything in flight is released, pulling nothing more', async () => {
    const { s, iterable } = source();
    const inFlight = createInFlight(20);
    let stop!: () => void;
    let completed = false;
    pullBatches(iterable, inFlight, new Promise<void>((r) => (stop = r))).subscribe({
      complete: () => (completed = true),
    });
    await ticks(20);
    stop();
    await ticks(20);
    expect(completed).toBe(false);
    inFlight.release(20);
    await ticks(5);
    expect(completed).toBe(true);
    expect(s.pulls).toBe(2);
  });

  it('completes when the consumer ends, and errors when it fails', async () => {
    const finite: AsyncIterable<EventBatch> = (async function* () {
      yield batch(9, 0);
    })();
    const inFlight = createInFlight(10);
    const got: EventBatch[] = [];
    await new Promise<void>((resolve) =>
      pullBatches(finite, inFlight, new Promise(() => {})).subscribe({
        next: (b) => (got.push(b), inFlight.release(1)),
        complete: resolve,
      }),
    );
    expect(got.map((b) => b.lastOffset)).toEqual([9]);
    const failing: AsyncIterable<EventBatch> = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('log gone')) }),
    };
    await expect(
      new Promise((_, reject) => pullBatches(failing, inFlight, new Promise(() => {})).subscribe({ error: reject })),
    ).rejects.toThrow('log gone');
  });
});
