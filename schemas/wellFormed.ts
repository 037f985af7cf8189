const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/** Deepest nesting of arrays and objects an event may hold: JSON.stringify overflows the stack near 10,000. */
export const MAX_NESTING = 64;

export type TextProblem = { readonly path: string; readonly problem: 'lone surrogate' | 'too deep' };

interface Node {
  readonly v: unknown;
  readonly depth: number;
  readonly key: string | number | undefined;
  readonly parent: Node | undefined;
}
/** `a.b[0].c` of a node, built only when a problem is found (building it per node would cost more than the walk). */
const pathOf = (n: Node | undefined): string => {
  const parts: string[] = [];
  for (let x = n; x?.key !== undefined; x = x.parent) parts.push(typeof x.key === 'number' ? `[${x.key}]` : x.key);
  return (
    parts
      .reverse()
      .map((p, i) => (i === 0 || p.startsWith('[') ? p : `.${p}`))
      .join('') || '(root)'
  );
};

/**
 * The first value (in document order) that no store or reader can keep: a string or key that is not
 * well-formed UTF-16 (a lone surrogate: UTF-8 has no encoding for it), or arrays and objects nested deeper
 * than `maxNesting`. Iterative, so any depth is walked without overflowing the stack.
 */
export const textProblem = (root: unknown, maxNesting = Infinity): TextProblem | undefined => {
  const stack: Node[] = [{ v: root, depth: 0, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const { v, depth } = n;
    if (typeof v === 'string') {
      if (!wellFormed(v)) return { path: pathOf(n), problem: 'lone surrogate' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxNesting) return { path: pathOf(n), problem: 'too deep' };
    // pushed last-first, so they are popped in document order
    if (Array.isArray(v))
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], depth: depth + 1, key: i, parent: n });
    else {
      const keys = Object.keys(v);
      for (const k of keys) if (!wellFormed(k)) return { path: pathOf(n), problem: 'lone surrogate' };
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        stack.push({ v: (v as Record<string, unknown>)[k], depth: depth + 1, key: k, parent: n });
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
