import type { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';

/** Where a record came from, for error messages: file and 1-based line (absent for a whole-file JSON document). */
export type Origin = { file: string; line?: number };

/** The first failing field of a zod error as an InputError naming file, line and field. */
export const fieldError = (origin: Origin, error: z.ZodError, what: string): InputError => {
  const issue = error.issues[0];
  const field =
    issue?.path.map(String).join('.') || (issue?.code === 'unrecognized_keys' ? issue.keys.join(',') : undefined);
  return new InputError(`not a valid ${what}: ${issue?.message ?? 'invalid'}`, { ...origin, field });
};

/** Parses with a schema, or throws the InputError for the first failing field. */
export const parseAt = <S extends z.ZodType>(schema: S, value: unknown, origin: Origin, what: string): z.output<S> => {
  const r = schema.safeParse(value);
  if (!r.success) throw fieldError(origin, r.error, what);
  return r.data;
};

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), for "did you mean". */
const distance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
};

/** The known name closest to `name` (case-insensitive, at most a third of its letters apart), if any. */
export const didYouMean = (name: string, known: readonly string[]): string | undefined => {
  const lower = name.toLowerCase();
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(lower, k.toLowerCase());
    if (d <= Math.max(1, Math.floor(k.length / 3)) && (!best || d < best.d)) best = { k, d };
  }
  return best?.k;
};

/** What a reader does with fields its format does not define. */
export type ReadOptions = {
  /** Keep reading when a record has fields the format does not define (they are ignored). @default false */
  readonly allowUnknownFields?: boolean;
};

/**
 * Refuses the first field of a record its format does not define, naming it with the closest known field: a
 * misspelt `tag` for `tags` would otherwise be dropped silently, and the row lose its must-not-break tag.
 */
export const refuseUnknownFields = (
  value: object,
  known: readonly string[],
  origin: Origin,
  opts: ReadOptions = {},
  remedy = 'pass --allow-unknown-fields to ignore fields passk does not define',
): void => {
  if (opts.allowUnknownFields) return;
  const unknown = Object.keys(value).find((k) => !known.includes(k));
  if (unknown === undefined) return;
  const near = didYouMean(unknown, known);
  throw new InputError(`unknown field "${unknown}"${near ? ` (did you mean "${near}"?)` : ''}; ${remedy}`, {
    ...origin,
    field: unknown,
  });
};
