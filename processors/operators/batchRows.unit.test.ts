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

  it('passes errors through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a#', { a: 1 }).pipe(batchRows({ maxRows: 10, maxWaitMs: 50 }))).toBe('-#');
    });
  });
});
