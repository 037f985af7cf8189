import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { commitWhenDurable } from './commitWhenDurable.ts';
import { createInFlight } from './inFlight.ts';

const unit = (partition: number, nextOffset: number, weight: number) => ({
  positions: [{ topic: 't', partition, nextOffset }],
  weight,
});

describe('commitWhenDurable', () => {
  it('commits each unit’s positions in order and releases its records from the window', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable, flush }) => {
      const inFlight = createInFlight(100);
      inFlight.acquire(30);
      const commits: number[] = [];
      const input = cold('ab|', { a: unit(0, 10, 10), b: unit(1, 20, 20) });
      const out = input.pipe(commitWhenDurable((p) => (commits.push(p[0]!.nextOffset), cold('--x|')), inFlight));
      expectObservable(out).toBe('---a--(b|)', {
        a: { ...unit(0, 10, 10), committed: true },
        b: { ...unit(1, 20, 20), committed: true },
      });
      flush();
      expect(commits).toEqual([10, 20]);
      expect(inFlight.count).toBe(0);
    });
  });

  it('drops a commit rejected because the partition moved, and goes on', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const inFlight = createInFlight(10);
      const rejected = new Error('moved');
      const out = cold('a|', { a: unit(0, 1, 1) }).pipe(
        commitWhenDurable(
          () => cold('#', {}, rejected),
          inFlight,
          (e) => e === rejected,
        ),
      );
      expectObservable(out).toBe('a|', { a: { ...unit(0, 1, 1), committed: false } });
    });
  });

  it('stops on any other commit error', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const out = cold('a|', { a: unit(0, 1, 1) }).pipe(
        commitWhenDurable(() => cold('-#', {}, 'down'), createInFlight(10)),
      );
      expectObservable(out).toBe('-#', {}, 'down');
    });
  });
});
