/**
 * Loops for what `Math.min(...xs)`, `Math.max(...xs)` and `out.push(...xs)` do: a spread passes one
 * argument per element on the stack, and throws "Maximum call stack size exceeded" somewhere past
 * 100k elements (at 250k rows per version the dashboard answered HTTP 500). Use these wherever the
 * length grows with the data.
 */

/** The smallest element; Infinity for none (as Math.min()). */
export const minOf = (xs: Iterable<number>): number => {
  let m = Infinity;
  for (const x of xs) if (x < m || Number.isNaN(x)) m = x;
  return m;
};

/** The largest element; -Infinity for none (as Math.max()). */
export const maxOf = (xs: Iterable<number>): number => {
  let m = -Infinity;
  for (const x of xs) if (x > m || Number.isNaN(x)) m = x;
  return m;
};

/** Appends every item to `target` in order; returns `target`. */
export const pushAll = <T>(target: T[], items: Iterable<T>): T[] => {
  for (const x of items) target.push(x);
  return target;
};
