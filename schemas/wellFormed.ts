const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/**
 * The path of the first string (key or value) that is not well-formed UTF-16 (a lone surrogate), if any.
 * No store or reader can keep such text: UTF-8 has no encoding for it.
 */
export const illFormedField = (v: unknown, path = ''): string | undefined => {
  if (typeof v === 'string') return wellFormed(v) ? undefined : path || '(root)';
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) {
      const p = illFormedField(x, `${path}[${i}]`);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      const p = wellFormed(k) ? illFormedField(x, path ? `${path}.${k}` : k) : path || '(root)';
      if (p !== undefined) return p;
    }
  return undefined;
};
