import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowIdOrder } from './groups.ts';

const collator = new Intl.Collator('en', { numeric: true }).compare;
const sign = (x: number): number => Math.sign(x);

// ids built from pieces that meet at the fast path's edges: digits (leading zeros too), ASCII letters and
// punctuation, a non-ASCII digit, letters that collate apart from their code units (é, ß, upper case)
const piece = fc.constantFrom(
  '0',
  '00',
  '1',
  '2',
  '9',
  '10',
  '12',
  '123',
  '007',
  'r',
  'R',
  'row',
  '-',
  '_',
  '.',
  ' ',
  'é',
  'ß',
  '٣',
  'a',
  'b',
  'Z',
);
const id = fc.array(piece, { maxLength: 6 }).map((ps) => ps.join(''));

describe('rowIdOrder', () => {
  it('orders every pair of generated ids as the numeric collator does', () => {
    fc.assert(
      fc.property(id, id, (a, b) => {
        expect(sign(rowIdOrder(a, b))).toBe(sign(collator(a, b)));
      }),
      { numRuns: 20_000 },
    );
  });

  it('orders ids sharing a prefix with their numbers appended as the collator does', () => {
    fc.assert(
      fc.property(id, fc.nat(100_000), fc.nat(100_000), (prefix, x, y) => {
        const a = `${prefix}${x}`;
        const b = `${prefix}${y}`;
        expect(sign(rowIdOrder(a, b))).toBe(sign(collator(a, b)));
      }),
      { numRuns: 20_000 },
    );
  });

  it('sorts a shuffled list of numbered ids as the collator does', () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => [`r${i}`, `case-${i % 7}-${i}`, `r0${i}`, `x${i}y`]).flat();
    const shuffled = [...ids].sort(
      (a, b) =>
        ((a.length * 31 + a.charCodeAt(a.length - 1)) % 17) - ((b.length * 31 + b.charCodeAt(b.length - 1)) % 17),
    );
    expect([...shuffled].sort(rowIdOrder)).toEqual([...shuffled].sort(collator));
  });
});
