/**
 * Exact rational arithmetic with BigInt, for checking floating-point estimators in tests.
 * Not part of the public surface.
 */
export type Rational = { num: bigint; den: bigint };

/** C(n, k) exactly. */
export const binomial = (n: number, k: number): bigint => {
  if (k < 0 || k > n) return 0n;
  const kk = Math.min(k, n - k);
  let r = 1n;
  for (let i = 0; i < kk; i++) r = (r * BigInt(n - i)) / BigInt(i + 1);
  return r;
};

/** A finite double as an exact rational m / 2^s (doubling is exact until the value is an integer). */
export const fromDouble = (x: number): Rational => {
  if (!Number.isFinite(x)) throw new RangeError(`not finite: ${x}`);
  let y = x;
  let s = 0n;
  while (!Number.isInteger(y)) {
    y *= 2;
    s++;
  }
  return { num: BigInt(y), den: 1n << s };
};

/** |x − r| ≤ tol, decided exactly (tol given as 1/10^digits). */
export const withinExact = (x: number, r: Rational, digits: number): boolean => {
  const q = fromDouble(x);
  const diff = q.num * r.den - r.num * q.den;
  const abs = diff < 0n ? -diff : diff;
  return abs * 10n ** BigInt(digits) <= q.den * r.den;
};
