import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { batchRows } from './batchRows.ts';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('batchRows', () => {
  it('emits when the rows reach maxRows', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const input = cold('a-b-c-d|', { a: 2, b: 2, c: 1, d: 5 });
      expectObservable(input.pipe(batchRows({ maxRows: 4, maxWaitMs: 1_000, sizeOf: (n) => n }))).toBe('--x---y|', {
        x: [2, 2],
        y: [1, 5],
      });
    });
  });

  it('emits maxWaitMs after a group’s first item, in virtual time', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const input = cold('a 99ms b 1000ms c 2000ms |', { a: 1, b: 1, c: 1 });
      // a at 0, b at 100: flushed at 500; c at 1101: flushed at 1601; complete at 3102
      expectObservable(input.pipe(batchRows({ maxRows: 100, maxWaitMs: 500 }))).toBe('500ms x 1100ms y 1500ms |', {
        x: [1, 1],
        y: [1],
      });
    });
  });

  it('emits the rest on completion and nothing when idle', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: 1 }).pipe(batchRows({ maxRows: 10, maxWaitMs: 50 }))).toBe('-(x|)', { x: [1] });
      expectObservable(cold('------|').pipe(batchRows({ maxRows: 10, maxWaitMs: 1 }))).toBe('------|');
    });
  });

  it('emits at once after an item that closes the group, not maxWaitMs later', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const input = cold('a 9ms b 9ms c 999ms |', { a: 1, b: -1, c: 1 });
      // b closes its group at 10 (the window would have closed it at 500); c's group waits for the window
      expectObservable(
        input.pipe(batchRows({ maxRows: 100, maxWaitMs: 500, sizeOf: () => 1, closesGroup: (n) => n < 0 })),
      ).toBe('10ms x 509ms y 499ms |', { x: [1, -1], y: [1] });
    });
  });

  it('passes errors through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a#', { a: 1 }).pipe(batchRows({ maxRows: 10, maxWaitMs: 50 }))).toBe('-#');
    });
  });
});
