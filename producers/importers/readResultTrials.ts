import { InputError } from '../../schemas/errors.ts';
import { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { PRODUCER_VERSION } from '../version.ts';
import type { ImportOptions } from './common.ts';
import { detectFormat, parseResultsFile, type ToolFormat } from './detect.ts';
import { readResultsText } from './readResults.ts';

/** A flat trial file by name: the flat readers (producers/files) read it, line by line. */
export const isFlatTrialFile = (file: string): boolean => /\.(csv|jsonl|ndjson)$/i.test(file);

/**
 * Another tool's results file, detected exactly as `passk import` detects it, read as TrialRecorded events (the
 * envelope `import` would write, times from the file or 0). Undefined when the file is flat trial JSONL (any
 * name): the flat readers then read it and name the line that is wrong.
 */
export const readToolResults = async (
  file: string,
  opts: ImportOptions = {},
): Promise<{ format: ToolFormat; trials: TrialRecorded[] } | undefined> => {
  if (isFlatTrialFile(file)) return undefined;
  const text = await readResultsText(file);
  let format;
  try {
    format = detectFormat(file, text);
  } catch (e) {
    if (e instanceof InputError) return undefined;
    throw e;
  }
  if (format === 'jsonl' || format === 'csv') return undefined;
  const { trials } = parseResultsFile(file, text, format, opts);
  return {
    format,
    trials: trials.map((t) =>
      TrialRecorded.parse({
        ...t,
        type: 'TrialRecorded',
        schema_version: 1,
        producer: `passk-report/${PRODUCER_VERSION}`,
        occurred_at: t.occurred_at ?? 0,
      }),
    ),
  };
};
