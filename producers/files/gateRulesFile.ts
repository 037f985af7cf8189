import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import { parseAt } from './fieldError.ts';

/**
 * `passk gate --rules FILE`: the optional gate rules as JSON, e.g.
 *   { "zero_forbidden_actions": true, "max_pass_at_1_drop": 0.02,
 *     "pass_hat_k": [{ "k": 3, "min": 0.9, "tag": "critical" }], "judge_agreement": { "min": 0.8 } }
 * Unknown keys are errors, so a misspelled rule is never silently ignored.
 */
export const GateRulesFile = z
  .object({
    zero_forbidden_actions: z.boolean().optional(),
    max_pass_at_1_drop: z.number().min(0).max(1).optional(),
    pass_hat_k: z
      .array(z.object({ k: z.number().int().min(1), min: z.number().min(0).max(1), tag: z.string().min(1) }).strict())
      .optional(),
    judge_agreement: z
      .object({ min: z.number().min(0).max(1) })
      .strict()
      .optional(),
  })
  .strict();
export type GateRulesFile = z.output<typeof GateRulesFile>;

export const readGateRulesFile = async (file: string): Promise<GateRulesFile> => {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw err.code
      ? unreadableFile(file, e, 'gate rules file')
      : new InputError(`not valid JSON (${err.message})`, { file });
  }
  return parseAt(GateRulesFile, value, { file }, 'gate rules file');
};
