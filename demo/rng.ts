import { createHash } from 'node:crypto';
import { createRng } from '../processors/core/prng.ts';

/**
 * Seeded randomness for the demo, drawn from passk's one generator (processors/core/prng.ts). Every draw is keyed
 * by what it is about (seed, version, row, attempt), so a trial's outcome does not depend on the order or the
 * concurrency the runner uses.
 */
export type Rng = () => number;

/** A generator seeded from any parts (strings or numbers): the same parts give the same stream of floats in [0, 1). */
export const rngFor = (...parts: readonly (string | number)[]): Rng =>
  createRng(createHash('sha256').update(JSON.stringify(parts)).digest().readUInt32LE(0)).next;

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
