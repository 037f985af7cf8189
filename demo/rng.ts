import { createHash } from 'node:crypto';

/**
 * Seeded randomness for the demo. Every draw is keyed by what it is about (seed, version, row, attempt),
 * so a trial's outcome does not depend on the order or the concurrency the runner uses.
 */
export type Rng = () => number;

/** mulberry32: a small, well-known 32-bit generator; returns floats in [0, 1). */
export const mulberry32 = (seed: number): Rng => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** A generator seeded from any parts (strings or numbers): the same parts give the same stream. */
export const rngFor = (...parts: readonly (string | number)[]): Rng =>
  mulberry32(createHash('sha256').update(JSON.stringify(parts)).digest().readUInt32LE(0));

export const pick = <T>(rng: Rng, items: readonly T[]): T => {
  if (items.length === 0) throw new RangeError('pick from an empty list');
  return items[Math.floor(rng() * items.length)] as T;
};

/** Picks by weight: `[[value, weight], …]`. */
export const weighted = <T>(rng: Rng, choices: readonly (readonly [T, number])[]): T => {
  const total = choices.reduce((s, [, w]) => s + w, 0);
  let x = rng() * total;
  for (const [value, w] of choices) {
    x -= w;
    if (x < 0) return value;
  }
  return choices[choices.length - 1]![0];
};

/** Fisher–Yates, in place on a copy. */
export const shuffled = <T>(rng: Rng, items: readonly T[]): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};
