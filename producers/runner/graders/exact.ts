import { InputError } from '../../../schemas/errors.ts';
import { contentHash } from '../../importers/common.ts';
import type { Grader } from './types.ts';

const asJson = (s: string | undefined): { ok: true; value: unknown } | { ok: false } => {
  if (s === undefined) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(s) as unknown };
  } catch {
    return { ok: false };
  }
};

/**
 * Exact match against the row's `expected`. A string is compared after trimming (and case-folding with
 * `caseInsensitive`); a JSON value is compared as JSON (key order does not matter).
 */
export const exactGrader = (opts: { caseInsensitive?: boolean } = {}): Grader => {
  const fold = (s: string) => (opts.caseInsensitive ? s.trim().toLowerCase() : s.trim());
  return {
    spec: { kind: 'exact', id: opts.caseInsensitive ? 'exact-ci' : 'exact', version: '1' },
    check(row) {
      if (row.expected === undefined)
        throw new InputError(`row ${row.id} has no "expected" to match exactly`, { field: 'expected' });
    },
    async grade({ row, output, value }) {
      if (typeof row.expected === 'string') {
        const passed = output !== undefined && fold(output) === fold(row.expected);
        return { passed, score: passed ? 1 : 0 };
      }
      const got = typeof value === 'string' ? asJson(value) : { ok: true as const, value };
      const passed = got.ok && contentHash(got.value) === contentHash(row.expected);
      return { passed, score: passed ? 1 : 0 };
    },
  };
};

/** The output matches the row's `expected`, read as a regular expression. */
export const regexGrader = (opts: { flags?: string } = {}): Grader => {
  const cache = new Map<string, RegExp>();
  const compile = (pattern: string): RegExp => {
    let re = cache.get(pattern);
    if (!re) cache.set(pattern, (re = new RegExp(pattern, opts.flags ?? '')));
    return re;
  };
  return {
    spec: { kind: 'regex', id: `regex${opts.flags ? `/${opts.flags}` : ''}`, version: '1' },
    check(row) {
      if (typeof row.expected !== 'string')
        throw new InputError(`row ${row.id}: "expected" must be a regular expression (a string)`, {
          field: 'expected',
        });
      try {
        compile(row.expected);
      } catch (e) {
        throw new InputError(`row ${row.id}: invalid regular expression: ${(e as Error).message}`, {
          field: 'expected',
        });
      }
    },
    async grade({ row, output }) {
      const passed = output !== undefined && compile(row.expected as string).test(output);
      return { passed, score: passed ? 1 : 0 };
    },
  };
};
