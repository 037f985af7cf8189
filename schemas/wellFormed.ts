const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/** Deepest nesting of arrays and objects an event may hold: JSON.stringify overflows the stack near 10,000. */
export const MAX_NESTING = 64;

export type TextProblem = { readonly path: string; readonly problem: 'lone surrogate' | 'too deep' };

/**
 * The first value (in document order) that no store or reader can keep: a string or key that is not
 * well-formed UTF-16 (a lone surrogate: UTF-8 has no encoding for it), or arrays and objects nested deeper
 * than `maxNesting`. Iterative, so any depth is walked without overflowing the stack.
 */
export const textProblem = (root: unknown, maxNesting = Infinity): TextProblem | undefined => {
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: root, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (!wellFormed(v)) return { path: path || '(root)', problem: 'lone surrogate' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxNesting) return { path: path || '(root)', problem: 'too deep' };
    // pushed last-first, so they are popped in document order
    if (Array.isArray(v))
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}[${i}]`, depth: depth + 1 });
    else {
      const entries = Object.entries(v);
      for (const [k] of entries) if (!wellFormed(k)) return { path: path || '(root)', problem: 'lone surrogate' };
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i]!;
        stack.push({ v: x, path: path ? `${path}.${k}` : k, depth: depth + 1 });
      }
    }
  }
  return undefined;
};

/** The path of the first string (key or value) that is not well-formed UTF-16 (a lone surrogate), if any. */
export const illFormedField = (v: unknown): string | undefined => {
  const p = textProblem(v);
  return p?.problem === 'lone surrogate' ? p.path : undefined;
};
