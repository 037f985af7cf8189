import { InputError } from '../../schemas/errors.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { FlatTrial } from '../../schemas/trialFile.ts';
import { parseAt, type Origin, type ReadOptions, refuseUnknownFields } from './fieldError.ts';
import { looksPublic, PublicTrial, publicToFlat } from './publicTrial.ts';
import { flatToTrial } from './toTrial.ts';

export type ReadTrial = { event: TrialRecorded; origin: Origin };

/**
 * One JSON object per line; blank lines are skipped. Each line is read as the flat trial format
 * (schemas/trialFile.ts) or as a public-trials record (`task_id` and no `suite`), so a file may mix them.
 */
const FLAT_FIELDS = Object.keys(FlatTrial.shape);

export const parseTrialRecord = (
  value: unknown,
  origin: Origin,
  opts: ReadOptions = {},
  receivedAt?: number,
): TrialRecorded => {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InputError('expected a JSON object', origin);
  if (!looksPublic(value)) refuseUnknownFields(value, FLAT_FIELDS, origin, opts);
  const flat = looksPublic(value)
    ? publicToFlat(parseAt(PublicTrial, value, origin, 'public-trials record'))
    : parseAt(FlatTrial, value, origin, 'flat trial');
  return flatToTrial(flat, origin, receivedAt);
};

/** One line of a JSON Lines trial file: undefined for a blank line. `line` is 1-based. */
export const parseTrialLine = (
  raw: string,
  file: string,
  line: number,
  opts: ReadOptions = {},
): ReadTrial | undefined => {
  const origin = { file, line };
  if (raw.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw new InputError(`not valid JSON (${(e as Error).message})`, origin);
  }
  return { event: parseTrialRecord(value, origin, opts), origin };
};

export const parseTrialLines = (text: string, file: string, opts: ReadOptions = {}): ReadTrial[] => {
  const out: ReadTrial[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const read = parseTrialLine(raw, file, i + 1, opts);
    if (read) out.push(read);
  });
  return out;
};
