import { describe, expect, it } from 'vitest';
import { createRng } from './prng.ts';

describe('createRng', () => {
  it('draws with ints exactly what as many calls of int draw, and continues the same stream', () => {
    for (const n of [1, 7, 99_991, 2 ** 31 - 1]) {
      const bulk = createRng(5);
      const one = createRng(5);
      const out = new Int32Array(10_000);
      bulk.ints(n, out);
      const expected = Int32Array.from({ length: out.length }, () => one.int(n));
      expect(out).toEqual(expected);
      expect(bulk.next()).toBe(one.next());
    }
  });
});
