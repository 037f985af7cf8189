import type { ReadOptions } from '../files/fieldError.ts';
import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { streamCsv } from '../files/csv.ts';
import { csvRecordTrial } from '../files/trialCsv.ts';
import { parseTrialLine } from '../files/trialLines.ts';
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
import { invalidUtf8At } from '../files/utf8.ts';
import { type Format, looksLikeJsonLines } from './detect.ts';
import { readHead } from './readResults.ts';
import { openToolFile } from './toolStream.ts';
import { createSummary, type ImportSummary } from './summary.ts';
import { MAX_NESTING, textProblem } from '../../schemas/wellFormed.ts';

export interface ImportDeps {
  readonly publisher: EventPublisher;
  /** The largest event the log accepts (`PASSK_MAX_EVENT_BYTES`); a larger trial is bad input. @default 1000000 */
  readonly maxEventBytes?: number;
  /** Called as trials are published: done of total (over every file), for a progress bar. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Called while the files are read and checked, before anything is published: bytes read of the bytes those
   * passes read (a flat file is read once, another tool's twice: its first pass, then the check), every
   * `readingEveryMs` and once at the end, for a progress bar. The total is known once each file's format is.
   */
  readonly onReading?: (done: number, total: number) => void;
  /** How often `onReading` is called while the files are read. @default 200 */
  readonly readingEveryMs?: number;
  /** Unsent events the import lets the recorder hold before it waits for them to be durable. @default 10000 */
  readonly maxInFlight?: number;
  /** Unsent events the recorder holds at most before it refuses more (`Backpressure`). @default 100000 */
  readonly maxBuffered?: number;
  /**
   * Bytes of unsent events the import lets the recorder hold before it waits for them to be durable (other tools'
   * trials carry texts of up to 8,000 characters each, so a count alone does not bound memory).
   * @default 1/16 of the V8 heap limit, within 1 and 64 MiB
   */
  readonly maxInFlightBytes?: number;
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
const refuseIdentityFlags = (file: string, opts: ImportOptions): void => {
  const given = IDENTITY_FLAGS.filter((f) => opts[f] !== undefined);
  if (given.length > 0)
    throw new InputError(
      `--${given[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} applies to other tools' results; a flat trial file names its own`,
      { file },
    );
};

/**
 * One trial of a file, with where it was read: its line (flat files), or its index and JSON path (`simulations[3]`,
 * an `.eval` sample's entry name) in another tool's file.
 */
type Entry = { t: ImportedTrial; line?: number | undefined; index: number; path?: string };
/** A file to import, which can be read more than once: JSON Lines are streamed from disk each time. */
type Source = { file: string; format: Format; declaredK?: number; entries: () => AsyncIterable<Entry> };

const cannotRead = (file: string, e: unknown): InputError =>
  new InputError(`cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file });

const MIB = 1024 * 1024;

/** The longest line a JSON Lines file may have: far over any trial (a text is clipped to 8,000 characters). */
export const MAX_LINE_BYTES = 64 * MIB;

/**
 * The lines of a file, split as `parseTrialLines` splits them (on \n, dropping a \r before it and a BOM), streamed.
 * Linear in the file's bytes however long a line is: a chunk is searched for line feeds once and a line's pieces are
 * joined once (joining the rest to each new chunk and splitting again was quadratic in a line's length: an 80 MB line
 * took 66 s). A line over `MAX_LINE_BYTES`, or one that is not UTF-8, is refused naming file, line and byte.
 */
async function* linesOf(file: string, onRead?: (bytes: number) => void): AsyncGenerator<string> {
  const stream = createReadStream(file);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 1;
  const take = (piece: Buffer): void => {
    pendingBytes += piece.length;
    if (pendingBytes > MAX_LINE_BYTES)
      throw new InputError(
        `the line is over ${MAX_LINE_BYTES / MIB} MiB (no trial needs that much: is this a JSON Lines file?)`,
        { file, line },
      );
    if (piece.length > 0) pending.push(piece);
  };
  const finish = (): string => {
    const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    const bad = invalidUtf8At(bytes);
    if (bad >= 0)
      throw new InputError(
        `not valid UTF-8: byte 0x${bytes[bad]!.toString(16).padStart(2, '0')} at byte ${bad + 1} of the line; save the file as UTF-8`,
        { file, line },
      );
    let text = bytes.toString('utf8');
    if (line === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
    line++;
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  };
  try {
    const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let counted = 0;
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (e) {
        throw cannotRead(file, e);
      }
      if (next.done) break;
      onRead?.(stream.bytesRead - counted);
      counted = stream.bytesRead;
      const chunk = next.value;
      let from = 0;
      for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
        take(chunk.subarray(from, nl));
        yield finish();
        from = nl + 1;
      }
      take(chunk.subarray(from));
    }
    yield finish();
  } finally {
    stream.destroy();
  }
}

const streamedLines = (file: string, opts: ImportOptions & ReadOptions): Source => ({
  file,
  format: 'jsonl',
  async *entries() {
    let line = 0;
    let index = 0;
    for await (const raw of linesOf(file, opts.onRead)) {
      line++;
      const read = parseTrialLine(raw, file, line, opts);
      if (read) yield { t: eventToInput(read.event), line, index: index++ };
    }
  },
});

const streamedCsv = (file: string, opts: ImportOptions & ReadOptions): Source => ({
  file,
  format: 'csv',
  async *entries() {
    let index = 0;
    for await (const r of streamCsv(file, opts.onRead)) {
      const read = csvRecordTrial(r, file, opts);
      yield { t: eventToInput(read.event), line: r.line, index: index++ };
    }
  },
});

/** Bytes of a file's start that tell JSON Lines from one JSON document (its first two lines, when shorter). */
const HEAD_BYTES = 1024 * 1024;

/**
 * Opens a results file. Flat JSON Lines and CSV (by `--format`, by a .jsonl/.ndjson/.csv name, or JSON Lines by the
 * first lines of their content) are streamed, so memory does not grow with the file. Other tools' files (one JSON
 * document, or an Inspect `.eval` zip of them) are streamed too (toolStream.ts): a first pass keeps a small key per
 * task or sample, then each pass maps one entry at a time.
 */
const openSource = async (file: string, opts: ImportOptions & ReadOptions & { format?: Format }): Promise<Source> => {
  const flat = opts.format ?? (/\.(jsonl|ndjson)$/i.test(file) ? 'jsonl' : /\.csv$/i.test(file) ? 'csv' : undefined);
  const sniffed =
    flat ?? (looksLikeJsonLines((await readHead(file, HEAD_BYTES)).toString('utf8')) ? 'jsonl' : undefined);
  if (sniffed === 'jsonl' || sniffed === 'csv') {
    refuseIdentityFlags(file, opts);
    return sniffed === 'jsonl' ? streamedLines(file, opts) : streamedCsv(file, opts);
  }
  const tool = await openToolFile(file, opts, opts.format);
  return {
    file,
    format: tool.format,
    ...(tool.declaredK === undefined ? {} : { declaredK: tool.declaredK }),
    entries: () => tool.entries(),
  };
};

const originOf = (file: string, e: Entry): { file: string; line?: number; field?: string } =>
  e.line === undefined ? { file, field: e.path ?? `[${e.index}]` } : { file, line: e.line };
const placeOf = (file: string, e: Entry): string =>
  `${file}${e.line !== undefined ? ` line ${e.line}` : ` ${e.path ?? `entry ${e.index}`}`}`;
const positionOf = (e: Entry): number => e.line ?? e.index;

const slotOf = (t: ImportedTrial): string =>
  JSON.stringify([t.suite, t.dataset_version, t.agent.version, t.run_id, String(t.row_id), t.attempt]);
const describeTrial = (t: ImportedTrial): string =>
  `attempt ${t.attempt} of row ${t.row_id} (run ${t.run_id}, agent ${t.agent.version})`;
const firstDifference = (a: ImportedTrial, b: ImportedTrial): string => {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  const get = (t: ImportedTrial, k: string) => JSON.stringify((t as Record<string, unknown>)[k]);
  return keys.find((k) => get(a, k) !== get(b, k)) ?? 'event_id';
};
/** A short digest: what the import keeps of each attempt instead of the trial. */
const digest = (s: string): string => createHash('sha1').update(s).digest('base64').slice(0, 16);

/** Where an attempt was first read: the file's index and the entry's position in it, and its content's digest. */
type Seen = { readonly hash: string; readonly file: number; readonly at: number };

const entryAt = async (source: Source, at: number): Promise<Entry> => {
  for await (const e of source.entries()) if (positionOf(e) === at) return e;
  throw new InputError('changed while it was imported; rerun the import', { file: source.file });
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

/**
 * One RunFinished per run and agent of a file's trials, added one at a time (it keeps counts per row). Its `k` is
 * what the file declares (`declaredK`: Inspect's epochs, τ²-bench's num_trials, …), and only that: a count of the
 * attempts found would make a missing one lower the default K of every reader.
 */
const createRuns = (declaredK: number | undefined) => {
  const runs = new Map<string, RunFinishedInput & { perRow: Map<string, number>; rowsSet: Set<string> }>();
  const add = (t: ImportedTrial): void => {
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
  };
  const result = (): RunFinishedInput[] =>
    [...runs.values()].map(({ perRow, rowsSet: _rows, ...r }) => ({
      ...r,
      rows: perRow.size,
      ...(declaredK === undefined ? {} : { k: declaredK }),
      note: 'imported',
    }));
  return { add, result };
};

/** The checks a trial passes before anything is sent, so a bad entry never leaves an import half published. */
const checkTrial = (t: ImportedTrial, at: ReturnType<typeof originOf>, producer: string, maxBytes: number) => {
  // in another tool's file, the trial's field is named within its entry: "simulations[3]: output"
  const where = {
    withField: (field: string) => ({
      ...at,
      field: at.line === undefined && at.field ? `${at.field}: ${field}` : field,
    }),
  };
  // the trial is one level below its event: the same limit the log's validation applies
  const bad = textProblem(t, MAX_NESTING - 1);
  if (bad)
    throw new InputError(
      bad.problem === 'too deep'
        ? `is nested deeper than ${MAX_NESTING} levels, which no store or reader can keep`
        : 'holds a lone UTF-16 surrogate (text that is not valid Unicode), which no store or reader can keep',
      where.withField(bad.path),
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
    throw new InputError(`not a valid trial: ${issue.message}`, where.withField(issue.path.join('.') || '(root)'));
  }
  const bytes = eventBytes(t, producer);
  if (bytes > maxBytes)
    throw new InputError(
      `the trial's event would be ${bytes} bytes, over the largest event the log accepts (PASSK_MAX_EVENT_BYTES = ${maxBytes}); shorten the field or raise the limit`,
      where.withField(largestField(t)),
    );
};

/**
 * Imports result files in two passes. Pass 1 reads and checks every entry of every file (a bad line or field stops
 * the import before anything is sent), keeping only a digest per distinct attempt to merge them as `report` does:
 * the same attempt twice with the same content counts once; with a different content (or under another event id)
 * it is an error naming both places. Pass 2 reads the files again and publishes each attempt once, and one
 * RunFinished per run and agent of each file, honouring the recorder's backpressure. JSON Lines are streamed both
 * times, and so are other tools' files (toolStream.ts), so memory grows with the number of distinct attempts, not
 * with the files' bytes.
 */
export const importFiles = async (
  files: readonly string[],
  opts: ImportOptions & ReadOptions & { format?: Format },
  deps: ImportDeps,
): Promise<FileReport[]> => {
  const producer = `passk-import/${PRODUCER_VERSION}`;
  const maxBytes = deps.maxEventBytes ?? 1_000_000;
  const sources: Source[] = [];
  const byId = new Map<string, Seen>();
  const bySlot = new Map<string, string>();
  const repeats: number[] = [];
  let total = 0;
  // the reading passes' progress: bytes read of each file's size times its passes before publishing
  const sizes = files.map((file) => {
    try {
      return statSync(file).size;
    } catch {
      return 0; // openSource names the file and the problem
    }
  });
  const flatFormat = (format: string | undefined) => format === 'jsonl' || format === 'csv';
  const passes = files.map((file) => (flatFormat(opts.format) || /\.(jsonl|ndjson|csv)$/i.test(file) ? 1 : 2));
  const toRead = () => sizes.reduce((sum, size, i) => sum + size * passes[i]!, 0);
  let read = 0;
  const reading = { ...opts, onRead: (bytes: number) => void (read += bytes) };
  const tick = deps.onReading
    ? setInterval(() => deps.onReading!(Math.min(read, toRead()), toRead()), deps.readingEveryMs ?? 200)
    : undefined;
  try {
    for (const [f, file] of files.entries()) {
      const source = await openSource(file, reading);
      passes[f] = flatFormat(source.format) ? 1 : 2;
      let entries = 0;
      let repeated = 0;
      for await (const e of source.entries()) {
        entries++;
        const where = originOf(file, e);
        checkTrial(e.t, where, producer, maxBytes);
        const hash = digest(JSON.stringify(e.t));
        const prior = byId.get(e.t.event_id);
        if (prior) {
          if (prior.hash !== hash) {
            const first = await entryAt(sources[prior.file] ?? source, prior.at);
            const field = firstDifference(first.t, e.t);
            throw new InputError(
              `${describeTrial(e.t)} was already read from ${placeOf(files[prior.file]!, first)} with a different ${field}`,
              { ...where, field },
            );
          }
          repeated++;
          continue;
        }
        const slot = digest(slotOf(e.t));
        const holder = bySlot.get(slot);
        if (holder !== undefined) {
          const seen = byId.get(holder)!;
          const first = await entryAt(sources[seen.file] ?? source, seen.at);
          throw new InputError(
            `${describeTrial(e.t)} was already read from ${placeOf(files[seen.file]!, first)} under another event id`,
            { ...where, field: 'event_id' },
          );
        }
        byId.set(e.t.event_id, { hash, file: f, at: positionOf(e) });
        bySlot.set(slot, e.t.event_id);
        total++;
      }
      // One rule with `report`: a file without a single trial is bad input, never a silent success.
      if (entries === 0) throw new InputError('no trials in this file', { file });
      sources.push(source);
      repeats.push(repeated);
    }
  } finally {
    clearInterval(tick);
  }
  deps.onReading?.(toRead(), toRead());
  bySlot.clear();
  const known = deps.source ? await existingEventIds(deps.source, [TOPICS.trials]) : new Set<string>();
  const recorder = createRecorder({
    publisher: deps.publisher,
    producer,
    ...(deps.retry ? { retry: deps.retry } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.maxBuffered ? { maxBuffered: deps.maxBuffered } : {}),
    maxWaitMs: 10_000,
    // the importer refuses conflicts itself (bySlot, digests): the recorder's memory of every trial's content would
    // hold the whole file (10,000 trials ran out of a 64 MiB heap)
    rememberTrials: 0,
  });
  const maxInFlight = deps.maxInFlight ?? 10_000;
  const maxInFlightBytes =
    deps.maxInFlightBytes ?? Math.min(64 * MIB, Math.max(MIB, getHeapStatistics().heap_size_limit / 16));
  let inFlightBytes = 0;
  let done = 0;
  const refused: unknown[] = [];
  const reports: FileReport[] = [];
  try {
    for (const [f, { file, format, declaredK }] of sources.entries()) {
      let published = 0;
      let skipped = 0;
      let trials = 0;
      const runs = createRuns(declaredK);
      const summary = createSummary(declaredK);
      for await (const e of sources[f]!.entries()) {
        const t = e.t;
        const seen = byId.get(t.event_id);
        if (!seen) throw new InputError('changed while it was imported; rerun the import', originOf(file, e));
        if (seen.file !== f || seen.at !== positionOf(e)) continue; // a repeat, counted in pass 1
        trials++;
        runs.add(t);
        summary.add({ ...t, row_id: String(t.row_id) });
        if (known.has(t.event_id)) skipped++;
        else {
          known.add(t.event_id);
          recorder.recordTrial(t).catch((err: unknown) => refused.push(err));
          published++;
          inFlightBytes += eventBytes(t, producer);
          // Honour the recorder's backpressure: wait for what is in flight to be durable before adding more.
          if (recorder.pending >= maxInFlight || inFlightBytes >= maxInFlightBytes) {
            await recorder.flush();
            inFlightBytes = 0;
          }
        }
        done++;
        if (done % 1000 === 0) deps.onProgress?.(done, total);
      }
      await recorder.flush();
      if (refused.length > 0) break;
      for (const run of runs.result()) {
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
      reports.push({ file, format, trials, published, skipped, repeated: repeats[f]!, summary: summary.result() });
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
