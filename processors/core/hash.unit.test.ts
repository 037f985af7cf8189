import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base36, hash53, hashString } from './hash.ts';

describe('base36', () => {
  it('is Number#toString(36) for every integer below 2^53', () => {
    for (const v of [0, 1, 35, 36, 1295, 1296, 1297, 36 ** 3 - 1, 36 ** 3, 36 ** 10, 2 ** 32, 2 ** 53 - 1])
      expect(base36(v)).toBe(v.toString(36));
    fc.assert(
      fc.property(fc.maxSafeNat(), (v) => {
        expect(base36(v)).toBe(v.toString(36));
      }),
      { numRuns: 5_000 },
    );
  });

  it('leaves hashString as it was: hash53 in base 36', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(), (s, seed) => {
        expect(hashString(s, seed)).toBe(hash53(s, seed).toString(36));
      }),
      { numRuns: 2_000 },
    );
  });
});
