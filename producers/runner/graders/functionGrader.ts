import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { InputError } from '../../../schemas/errors.ts';
import { Check } from '../../../schemas/events/trialRecorded.ts';
import { sha256 } from '../../importers/common.ts';
import type { GradeInput, Grader } from './types.ts';

const Verdict = z.union([
  z.boolean(),
  z.null(),
  z.object({
    passed: z.boolean().nullable(),
    score: z.number().nullable().optional(),
    checks: z.array(Check).optional(),
  }),
]);

/**
 * A custom grader: a module whose default export (or `grade`) takes `{ row, output, value, result }` and returns
 * true/false, null (cannot grade), or `{ passed, score?, checks? }`. Its version is its `version` export, else a
 * hash of its source. What it throws is classified like an agent's error (retriable = try again).
 */
export const createFunctionGrader = async (path: string): Promise<Grader> => {
  const abs = resolve(path);
  let source: string;
  try {
    source = await readFile(abs, 'utf8');
  } catch {
    throw new InputError('cannot read the grader module', { file: path });
  }
  const mod = (await import(pathToFileURL(abs).href)) as {
    default?: unknown;
    grade?: unknown;
    version?: unknown;
    id?: unknown;
  };
  const fn = (typeof mod.default === 'function' ? mod.default : mod.grade) as
    ((input: GradeInput) => unknown) | undefined;
  if (typeof fn !== 'function')
    throw new InputError('the grader module exports no default function (or `grade`)', { file: path });
  return {
    spec: {
      kind: 'function',
      id: typeof mod.id === 'string' ? mod.id : (abs.split(/[\\/]/).pop() ?? path),
      version: typeof mod.version === 'string' ? mod.version : `sha-${sha256(source).slice(0, 12)}`,
    },
    check: () => {},
    async grade(input) {
      const r = Verdict.safeParse(await fn(input));
      if (!r.success)
        throw new InputError(`the grader returned an invalid verdict: ${r.error.issues[0]!.message}`, { file: path });
      const v = r.data;
      if (v === null || typeof v === 'boolean') return { passed: v, score: v === null ? null : v ? 1 : 0 };
      return {
        passed: v.passed,
        ...(v.score === undefined ? {} : { score: v.score }),
        ...(v.checks ? { checks: v.checks } : {}),
      };
    },
  };
};
