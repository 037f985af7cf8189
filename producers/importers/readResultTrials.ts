import { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { PRODUCER_VERSION } from '../version.ts';
import type { ImportOptions } from './common.ts';
import type { ToolFormat } from './detect.ts';
import { looksLikeJsonLines } from './detect.ts';
import { readHead } from './readResults.ts';
import { NotAToolFile, openToolFile } from './toolStream.ts';

/** A flat trial file by name: the flat readers (producers/files) read it, line by line. */
export const isFlatTrialFile = (file: string): boolean => /\.(csv|jsonl|ndjson)$/i.test(file);

/**
 * Another tool's results file, detected exactly as `passk import` detects it, read as TrialRecorded events (the
 * envelope `import` would write, times from the file or 0; without input and actions). The file is streamed as `import` streams it
 * (toolStream.ts): memory holds its trials, not its text. Undefined when the file is flat trial JSONL (any name):
 * the flat readers then read it and name the line that is wrong. `declaredK` is the attempts per row the file
 * declares (`ToolSource.declaredK`), which `import` writes as its run's RunFinished `k`.
 */
export const readToolResults = async (
  file: string,
  opts: ImportOptions = {},
): Promise<{ format: ToolFormat; trials: TrialRecorded[]; declaredK?: number } | undefined> => {
  if (isFlatTrialFile(file)) return undefined;
  if (looksLikeJsonLines((await readHead(file, 1024 * 1024)).toString('utf8'))) return undefined;
  let source;
  try {
    source = await openToolFile(file, opts);
  } catch (e) {
    if (e instanceof NotAToolFile) return undefined;
    throw e;
  }
  const trials: TrialRecorded[] = [];
  // The report reads neither the input nor the actions of a trial (often most of its bytes: τ-bench's whole
  // trajectory), so they are not held. What is held is copied (JSON.parse makes new strings): a string the parser
  // cut from its text can keep all of that text alive (20 KB per τ-bench trial, measured). So a 215 MB τ-bench
  // file is reported under a 128 MiB heap.
  for await (const { t } of source.entries()) {
    const { input: _input, actions: _actions, ...kept } = t;
    trials.push(
      TrialRecorded.parse({
        ...(JSON.parse(JSON.stringify(kept)) as typeof kept),
        type: 'TrialRecorded',
        schema_version: 1,
        producer: `passk-report/${PRODUCER_VERSION}`,
        occurred_at: t.occurred_at ?? 0,
      }),
    );
  }
  return {
    format: source.format,
    trials,
    ...(source.declaredK === undefined ? {} : { declaredK: source.declaredK }),
  };
};
