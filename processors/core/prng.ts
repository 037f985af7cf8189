/**
 * A seeded pseudo-random generator: xoshiro128** (Blackman & Vigna), seeded through splitmix32.
 * Fast, 2^128 − 1 period, good enough for bootstrap resampling; the same seed always gives the
 * same stream, so every interval passk prints can be reproduced exactly.
 */
export interface Rng {
  /** A float in [0, 1) with 32 bits of randomness. */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /**
   * `out.length` integers in [0, n), exactly what as many calls of `int(n)` return (the bootstrap's draws, in
   * one loop without a call per draw). n < 2^31.
   */
  ints(n: number, out: Int32Array): void;
}

const splitmix32 = (seed: number): (() => number) => {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
};

const rotl = (x: number, k: number): number => (x << k) | (x >>> (32 - k));

export const createRng = (seed: number): Rng => {
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const nextU32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
  const next = (): number => nextU32() / 4294967296;
  const ints = (n: number, out: Int32Array): void => {
    let w = a;
    let x = b;
    let y = c;
    let z = d;
    for (let i = 0; i < out.length; i++) {
      const result = Math.imul(rotl(Math.imul(x, 5), 7), 9) >>> 0;
      const t = x << 9;
      y ^= w;
      z ^= x;
      x ^= y;
      w ^= z;
      y ^= t;
      z = rotl(z, 11);
      // Math.floor(next() * n): the same double operations; below 2^31 a truncation is the floor
      out[i] = ((result / 4294967296) * n) | 0;
    }
    a = w;
    b = x;
    c = y;
    d = z;
  };
  return { next, int: (n) => Math.floor(next() * n), ints };
};
