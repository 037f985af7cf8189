import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { emitChanges } from '../../processors/operators/emitChanges.ts';

const e1 = trial({ row: 'r1', version: 'v', attempt: 0, passed: true });

describe('emitChanges', () => {
  it('passes a unit on only after its publish is acknowledged, one unit at a time', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const published: PasskEvent[][] = [];
      const publish = (events: readonly PasskEvent[]) => {
        published.push([...events]);
        return cold('---(a|)');
      };
      const input = cold('ab|', { a: { events: [e1] }, b: { events: [e1, e1] } });
      expectObservable(input.pipe(emitChanges(publish, (u) => u.events))).toBe('---a--(b|)', {
        a: { events: [e1] },
        b: { events: [e1, e1] },
      });
    });
  });

  it('skips the publish when a unit has nothing to emit', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      let calls = 0;
      const input = cold('a|', { a: { events: [] as PasskEvent[] } });
      expectObservable(
        input.pipe(
          emitChanges(
            () => (calls++, cold('-|')),
            (u) => u.events,
          ),
        ),
      ).toBe('a|', { a: { events: [] } });
      expect(calls).toBe(0);
    });
  });

  it('fails the stream when a publish fails (nothing after it is committed)', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const input = cold('ab|', { a: { events: [e1] }, b: { events: [e1] } });
      expectObservable(
        input.pipe(
          emitChanges(
            () => cold('--#', {}, new Error('broker down')),
            (u) => u.events,
          ),
        ),
      ).toBe('--#', {}, new Error('broker down'));
    });
  });
});
