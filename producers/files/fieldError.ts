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
