import type { ReadOptions } from '../files/fieldError.ts';
import { parseTrialText } from '../files/readTrialFiles.ts';
import { InputError, PipelineError } from '../../schemas/errors.ts';
import type { EventPublisher, EventSource } from '../../processors/ports.ts';
import { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS, KEY_SEP } from '../../schemas/topics.ts';
import { existingEventIds } from '../logReader.ts';
import { runFinishedEventId } from '../sdk/ids.ts';
import type { RunFinishedInput } from '../sdk/inputs.ts';
import { createRecorder } from '../sdk/recorder.ts';
import type { RetryPolicy } from '../../schemas/retry.ts';
import { PRODUCER_VERSION } from '../version.ts';
import type { ImportedTrial, ImportOptions } from './common.ts';
import { detectFormat, type Format, parseResultsFile } from './detect.ts';
import { readResultsText } from './readResults.ts';
import { type ImportSummary, summarize } from './summary.ts';

export interface ImportDeps {
  readonly publisher: EventPublisher;
  /** The largest event the log accepts (`PASSK_MAX_EVENT_BYTES`); a larger trial is bad input. @default 1000000 */
  readonly maxEventBytes?: number;
  /** Called as trials are published: done of total (over every file), for a progress bar. */
  readonly onProgress?: (done: number, total: number) => void;
  /** Unsent events the import lets the recorder hold before it waits for them to be durable. @default 10000 */
  readonly maxInFlight?: number;
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
  /** Already in the log, so not published again. */
  readonly skipped: number;
  /** Entries repeating an attempt already read in this import with the same content: counted once. */
  readonly repeated: number;
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
const flatTrials = (file: string, text: string, opts: ImportOptions & ReadOptions): ImportedTrial[] => {
  const given = IDENTITY_FLAGS.filter((f) => opts[f] !== undefined);
  if (given.length > 0)
    throw new InputError(
      `--${given[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} applies to other tools' results; a flat trial file names its own`,
      { file },
    );
  return parseTrialText(text, file, opts).map((r) => ({ ...eventToInput(r.event), [LINE]: r.origin.line }));
};

/** The line a flat trial was read from (tools' files: the entry's index names it instead). */
const LINE = Symbol('line');
type Located = ImportedTrial & { [LINE]?: number | undefined };
const originOf = (
  file: string,
  trials: readonly Located[],
  i: number,
): { file: string; line?: number; field?: string } => {
  const line = trials[i]![LINE];
  return line === undefined ? { file, field: `[${i}]` } : { file, line };
};

type Parsed = { file: string; format: Format; trials: readonly Located[] };

const slotOf = (t: ImportedTrial): string =>
  JSON.stringify([t.suite, t.dataset_version, t.agent.version, t.run_id, String(t.row_id), t.attempt]);
const describeTrial = (t: ImportedTrial): string =>
  `attempt ${t.attempt} of row ${t.row_id} (run ${t.run_id}, agent ${t.agent.version})`;
const firstDifference = (a: ImportedTrial, b: ImportedTrial): string => {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  const get = (t: ImportedTrial, k: string) => JSON.stringify((t as Record<string, unknown>)[k]);
  return keys.find((k) => get(a, k) !== get(b, k)) ?? 'event_id';
};

/**
 * Merges the trials of every file, as `report` merges them: the same attempt twice with the same content counts
 * once; the same attempt with a different content (or under another event id) is an error naming both places.
 * Returns, per file, the trials it adds and how many repeated one already read.
 */
const mergeAll = (parsed: readonly Parsed[]): { unique: ImportedTrial[]; repeated: number }[] => {
  const byId = new Map<string, { t: ImportedTrial; at: string }>();
  const bySlot = new Map<string, { t: ImportedTrial; at: string }>();
  return parsed.map(({ file, trials }) => {
    const unique: ImportedTrial[] = [];
    let repeated = 0;
    trials.forEach((t, i) => {
      const where = originOf(file, trials, i);
      const at = `${file}${where.line !== undefined ? ` line ${where.line}` : ` entry ${i}`}`;
      const { [LINE]: _line, ...clean } = t;
      const prior = byId.get(t.event_id);
      if (prior) {
        if (JSON.stringify(prior.t) !== JSON.stringify(clean)) {
          const field = firstDifference(prior.t, clean);
          throw new InputError(`${describeTrial(t)} was already read from ${prior.at} with a different ${field}`, {
            ...where,
            field,
          });
        }
        repeated++;
        return;
      }
      const holder = bySlot.get(slotOf(t));
      if (holder)
        throw new InputError(`${describeTrial(t)} was already read from ${holder.at} under another event id`, {
          ...where,
          field: 'event_id',
        });
      byId.set(t.event_id, { t: clean, at });
      bySlot.set(slotOf(t), { t: clean, at });
      unique.push(clean);
    });
    return { unique, repeated };
  });
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/** The path of the first string (key or value) that is not well-formed UTF-16, if any. */
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

/** The bytes of a trial's event as the log stores it (JSON, plus the 5-byte schema-registry header on Kafka). */
const eventBytes = (t: ImportedTrial, producer: string): number =>
  Buffer.byteLength(
    JSON.stringify({ ...t, type: 'TrialRecorded', schema_version: 1, producer, occurred_at: t.occurred_at ?? 0 }),
  ) + 5;
const largestField = (t: ImportedTrial): string =>
  Object.entries(t).reduce(
    (best, [k, v]) => {
      const n = Buffer.byteLength(JSON.stringify(v) ?? '');
      return n > best.n ? { k, n } : best;
    },
    { k: '(root)', n: -1 },
  ).k;

const runsOf = (trials: readonly ImportedTrial[]): RunFinishedInput[] => {
  const runs = new Map<string, RunFinishedInput & { perRow: Map<string, number>; rowsSet: Set<string> }>();
  for (const t of trials) {
    const key = [t.suite, t.dataset_version, t.agent.version, t.run_id].join(KEY_SEP);
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
  opts: ImportOptions & ReadOptions & { format?: Format },
  deps: ImportDeps,
): Promise<FileReport[]> => {
  const producer = `passk-import/${PRODUCER_VERSION}`;
  const maxBytes = deps.maxEventBytes ?? 1_000_000;
  const parsed: Parsed[] = [];
  for (const file of files) {
    const text = await readResultsText(file);
    const format = detectFormat(file, text, opts.format);
    const trials: Located[] =
      format === 'jsonl' || format === 'csv'
        ? flatTrials(file, text, opts)
        : parseResultsFile(file, text, format, opts).trials;
    // One rule with `report`: a file without a single trial is bad input, never a silent success.
    if (trials.length === 0) throw new InputError('no trials in this file', { file });
    trials.forEach((t, i) => {
      const where = originOf(file, trials, i);
      // Checked here, before anything is sent, so a bad entry never leaves an import half published.
      const bad = illFormedField(t);
      if (bad !== undefined)
        throw new InputError(
          'holds a lone UTF-16 surrogate (text that is not valid Unicode), which no store or reader can keep',
          { ...where, field: bad },
        );
      const check = TrialRecorded.safeParse({
        ...t,
        type: 'TrialRecorded',
        schema_version: 1,
        producer,
        occurred_at: t.occurred_at ?? 0,
      });
      if (!check.success) {
        const issue = check.error.issues[0]!;
        throw new InputError(`not a valid trial: ${issue.message}`, {
          ...where,
          field: issue.path.join('.') || '(root)',
        });
      }
      const bytes = eventBytes(t, producer);
      if (bytes > maxBytes)
        throw new InputError(
          `the trial's event would be ${bytes} bytes, over the largest event the log accepts (PASSK_MAX_EVENT_BYTES = ${maxBytes}); shorten the field or raise the limit`,
          { ...where, field: largestField(t) },
        );
    });
    parsed.push({ file, format, trials });
  }
  const merged = mergeAll(parsed);
  const known = deps.source ? await existingEventIds(deps.source, [TOPICS.trials]) : new Set<string>();
  const recorder = createRecorder({
    publisher: deps.publisher,
    producer,
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
    maxWaitMs: 10_000,
  });
  const maxInFlight = deps.maxInFlight ?? 10_000;
  const total = merged.reduce((n, m) => n + m.unique.length, 0);
  let done = 0;
  const refused: unknown[] = [];
  const reports: FileReport[] = [];
  try {
    for (const [i, { file, format }] of parsed.entries()) {
      const { unique: trials, repeated } = merged[i]!;
      let published = 0;
      let skipped = 0;
      for (const t of trials) {
        if (known.has(t.event_id)) skipped++;
        else {
          known.add(t.event_id);
          recorder.recordTrial(t).catch((e: unknown) => refused.push(e));
          published++;
          // Honour the recorder's backpressure: wait for what is in flight to be durable before adding more.
          if (recorder.pending >= maxInFlight) await recorder.flush();
        }
        done++;
        if (done % 1000 === 0) deps.onProgress?.(done, total);
      }
      await recorder.flush();
      if (refused.length > 0) break;
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
      deps.onProgress?.(done, total);
      reports.push({
        file,
        format,
        trials: trials.length,
        published,
        skipped,
        repeated,
        summary: summarize(trials.map((t) => ({ ...t, row_id: String(t.row_id) }))),
      });
    }
  } finally {
    await recorder.close();
  }
  if (refused.length > 0) {
    const first = refused[0] as Error;
    throw new PipelineError(
      `the event log refused ${refused.length} trial(s) (first: ${first.message}); rerun the import to finish it: what is already published is skipped`,
      { retriable: false, cause: first },
    );
  }
  return reports;
};
