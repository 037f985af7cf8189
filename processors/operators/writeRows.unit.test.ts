import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { writeRows } from './writeRows.ts';

describe('writeRows', () => {
  it('holds each unit until its write is durable; a slow write holds the ones behind it', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      const latency = { a: '-----|', b: '-|' } as const;
      const input = cold('ab|');
      expectObservable(input.pipe(writeRows((u: string) => cold(latency[u as 'a' | 'b'])))).toBe('-----a(b|)');
    });
  });

  it('treats a write that completes without a value as durable', () => {
    new TestScheduler((a, e) => expect(a).toEqual(e)).run(({ cold, expectObservable }) => {
      expectObservable(cold('a|').pipe(writeRows(() => cold('--|')))).toBe('--(a|)');
    });
  });
});
