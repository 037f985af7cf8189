import { parseTrialText } from '../files/readTrialFiles.ts';
import { InputError } from '../../schemas/errors.ts';
import type { EventPublisher, EventSource } from '../../processors/ports.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { existingEventIds } from '../logReader.ts';
import { runFinishedEventId } from '../sdk/ids.ts';
import type { RunFinishedInput } from '../sdk/inputs.ts';
import { createRecorder } from '../sdk/recorder.ts';
import type { RetryPolicy } from '../sdk/retry.ts';
import { PRODUCER_VERSION } from '../version.ts';
import type { ImportedTrial, ImportOptions } from './common.ts';
import { detectFormat, type Format, parseResultsFile } from './detect.ts';
import { readResultsText } from './readResults.ts';
import { type ImportSummary, summarize } from './summary.ts';

export interface ImportDeps {
  readonly publisher: EventPublisher;
  /** When given, events the log already holds are not published again (ids are deterministic either way). */
  readonly source?: EventSource;
  readonly retry?: RetryPolicy;
  readonly clock?: () => number;
}

export interface FileReport {
  readonly file: string;
  readonly format: Format;
  readonly trials: number;
  /** Trials (and end-of-run markers) newly published. */
  readonly published: number;
  /** Already in the log (or twice in this import), so not published again. */
  readonly skipped: number;
  readonly summary: ImportSummary[];
}

/** TrialRecorded events from a reader become recorder input: the recorder writes the envelope again. */
export const eventToInput = (e: TrialRecorded): ImportedTrial => {
  const { type: _type, schema_version: _v, producer: _p, ...rest } = e;
  return rest;
};

const IDENTITY_FLAGS = [
  'suite',
  'agentVersion',
  'datasetId',
  'datasetVersion',
  'runId',
  'scorer',
  'passThreshold',
] as const;

/** Flat JSONL and CSV (and public-trials lines) name their own identity: read by producers/files. */
const flatTrials = (file: string, text: string, opts: ImportOptions): ImportedTrial[] => {
  const given = IDENTITY_FLAGS.filter((f) => opts[f] !== undefined);
  if (given.length > 0)
    throw new InputError(
      `--${given[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} applies to other tools' results; a flat trial file names its own`,
      { file },
    );
  return parseTrialText(text, file).map((r) => eventToInput(r.event));
};

type Parsed = { file: string; format: Format; trials: readonly ImportedTrial[] };

const runsOf = (trials: readonly ImportedTrial[]): RunFinishedInput[] => {
  const runs = new Map<string, RunFinishedInput & { perRow: Map<string, number>; rowsSet: Set<string> }>();
  for (const t of trials) {
    const key = [t.suite, t.dataset_version, t.agent.version, t.run_id].join('\u001f');
    const r =
      runs.get(key) ??
      ({
        run_id: t.run_id,
        suite: t.suite,
        dataset_version: t.dataset_version,
        agent: t.agent,
        status: 'completed',
        trials: 0,
        ungraded: 0,
        perRow: new Map(),
        rowsSet: new Set(),
        ...(t.dataset_id ? { dataset_id: t.dataset_id } : {}),
      } as RunFinishedInput & {
        perRow: Map<string, number>;
        rowsSet: Set<string>;
      });
    runs.set(key, r);
    r.trials = (r.trials ?? 0) + 1;
    if (t.passed === null) r.ungraded = (r.ungraded ?? 0) + 1;
    r.perRow.set(String(t.row_id), (r.perRow.get(String(t.row_id)) ?? 0) + 1);
    if (t.occurred_at !== undefined) r.occurred_at = Math.max(r.occurred_at ?? 0, t.occurred_at);
  }
  return [...runs.values()].map(({ perRow, rowsSet: _rows, ...r }) => {
    const counts = new Set(perRow.values());
    return { ...r, rows: perRow.size, ...(counts.size === 1 ? { k: [...counts][0]! } : {}), note: 'imported' };
  });
};

/**
 * Imports result files: every file is read and checked first (a bad line or field stops the import before
 * anything is sent), then each trial, and one RunFinished per run and agent, is published once.
 */
export const importFiles = async (
  files: readonly string[],
  opts: ImportOptions & { format?: Format },
  deps: ImportDeps,
): Promise<FileReport[]> => {
  const parsed: Parsed[] = [];
  for (const file of files) {
    const text = await readResultsText(file);
    const format = detectFormat(file, text, opts.format);
    const trials =
      format === 'jsonl' || format === 'csv'
        ? flatTrials(file, text, opts)
        : parseResultsFile(file, text, format, opts).trials;
    parsed.push({ file, format, trials });
  }
  const known = deps.source ? await existingEventIds(deps.source, [TOPICS.trials]) : new Set<string>();
  const recorder = createRecorder({
    publisher: deps.publisher,
    producer: `passk-import/${PRODUCER_VERSION}`,
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
    maxWaitMs: 10_000,
  });
  const reports: FileReport[] = [];
  try {
    for (const { file, format, trials } of parsed) {
      let published = 0;
      let skipped = 0;
      for (const t of trials) {
        if (known.has(t.event_id)) skipped++;
        else {
          known.add(t.event_id);
          void recorder.recordTrial(t);
          published++;
        }
      }
      for (const run of runsOf(trials)) {
        const id = runFinishedEventId({
          suite: run.suite!,
          dataset_version: run.dataset_version!,
          agent: { version: run.agent!.version },
          run_id: run.run_id,
          status: 'completed',
          trials: run.trials ?? 0,
        });
        if (known.has(id)) continue;
        known.add(id);
        await recorder.markRunFinished({ ...run, event_id: id });
        published++;
      }
      await recorder.flush();
      reports.push({
        file,
        format,
        trials: trials.length,
        published,
        skipped,
        summary: summarize(trials.map((t) => ({ ...t, row_id: String(t.row_id) }))),
      });
    }
  } finally {
    await recorder.close();
  }
  return reports;
};
