/**
 * The HTTP ingest API: `POST /api/v1/{trials,traces,judgments,labels}` with a JSON array or NDJSON of the flat
 * shapes the SDK takes (the flat trial format for trials). Each item is validated by the same zod schemas (and gets
 * the same deterministic event id) as through the SDK; the valid ones are published in one call and the answer is
 * sent only once they are durable in the log. A rejected item writes nothing.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createGunzip } from 'node:zlib';
import type { EventPublisher } from '../../processors/ports.ts';
import { InputError, PipelineError } from '../../schemas/errors.ts';
import type { PasskEvent, TrialRecorded } from '../../schemas/events/index.ts';
import { DatasetRowUpserted } from '../../schemas/events/datasets.ts';
import { Id } from '../../schemas/envelope.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { createSlotMemory } from '../trialSlots.ts';
import { parseTrialRecord } from '../files/trialLines.ts';
import { publishedRowOf } from '../datasets/publish.ts';
import { DatasetRow } from '../runner/dataset.ts';
import { createOtlpReceiver, encodeResponse, encodeStatus, MalformedOtlp, type OtlpReceiver } from '../otlp/index.ts';
import type { OtlpReceiverOptions } from '../otlp/receiver.ts';
import { InvalidRecord } from '../sdk/inputs.ts';
import type { Redactor } from '../redaction/text.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { createRecorder } from '../sdk/recorder.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { ingestOpenApi } from './openapi.ts';

export const INGEST_PRODUCER = `passk-ingest/${PRODUCER_VERSION}`;
export const INGEST_KINDS = ['trials', 'traces', 'judgments', 'labels'] as const;
/** `datasets` is `POST /api/v1/datasets/{id}/rows?version=V`. */
export type IngestKind = (typeof INGEST_KINDS)[number] | 'datasets';

/** Where dataset rows go: the dataset id of the path and the version of the query. */
export interface DatasetTarget {
  readonly datasetId: string;
  readonly version: string;
}

export type ItemResult =
  | { index: number; status: 'accepted' | 'duplicate'; event_id: string }
  | { index: number; status: 'rejected'; field: string; reason: string };

export interface IngestAnswer {
  accepted: number;
  duplicates: number;
  rejected: number;
  items: ItemResult[];
}

export interface IngestOptions {
  readonly publisher: EventPublisher;
  /** Writes need `Authorization: Bearer <token>`. Without a token, writes are refused (401). */
  readonly token?: string;
  /** Largest request body of the `/api/v1` endpoints, after gunzip. @default 16 MiB */
  readonly maxBodyBytes?: number;
  /**
   * Largest OTLP body (`/v1/traces`, `/v1/logs`), after gunzip: an exporter's default batch of 512 spans with 100 KB
   * prompts is ~52 MB. @default 64 MiB
   */
  readonly maxOtlpBodyBytes?: number;
  /**
   * Bytes of request bodies being read at once, over every connection (bodies are read before a write slot is taken,
   * so this bounds their memory); over it, a request is answered 503 with Retry-After. @default 512 MiB
   */
  readonly maxReadingBytes?: number;
  /** Items in one `/api/v1` request (which bounds the answer's size). @default 10,000 */
  readonly maxItems?: number;
  /**
   * Requests publishing at once (a request takes a slot once its body has arrived, so slow uploads hold none);
   * beyond that the answer is 429 with Retry-After. @default 16
   */
  readonly maxInFlight?: number;
  /** Event ids acknowledged recently, remembered to answer `duplicate`. @default 1_000_000 */
  readonly rememberIds?: number;
  /**
   * The trials already in the log, read once at start (in log order), so that a conflicting re-send is refused
   * after a restart too (the first answer of each slot, the processors' rule; the last `rememberIds` kept).
   * Trial requests wait for it; a failed read is reported (`onError`) and the server goes on from what it read.
   */
  readonly knownTrials?: (onTrial: (t: TrialRecorded) => void) => Promise<unknown>;
  /** The redactors of traces, on `/api/v1/traces` and `POST /v1/traces`. @default DEFAULT_REDACTORS */
  readonly redactors?: readonly Redactor[];
  /** The OTLP receiver at `POST /v1/traces`: its sampling policy and redactors (default: keep every trace). */
  readonly otlp?: Omit<OtlpReceiverOptions, 'publisher' | 'onError'>;
  readonly onError?: (e: unknown) => void;
  /** Counters of what was accepted and refused (`GET /metrics`). */
  readonly metrics?: IngestMetrics;
}

/** What the ingest routes count, by endpoint kind and outcome. */
export interface IngestMetrics {
  items: Map<string, number>;
  requests: Map<string, number>;
  inFlight: number;
  /** Requests whose body is being read. */
  reading: number;
  receiver?: OtlpReceiver;
}

export const createIngestMetrics = (): IngestMetrics => ({
  items: new Map(),
  requests: new Map(),
  inFlight: 0,
  reading: 0,
});
const bump = (m: Map<string, number>, key: string, by = 1) => m.set(key, (m.get(key) ?? 0) + by);

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const sameToken = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Reads the body, gunzipping `Content-Encoding: gzip`, refusing more than `max` bytes with 413. */
export const readBody = async (
  req: IncomingMessage,
  max: number,
  /** Bytes all bodies being read may hold together (shared by the server's requests); over it: 503. */
  budget?: { used: number; readonly max: number },
): Promise<Buffer> => {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip')
    throw new HttpError(415, `unsupported Content-Encoding "${encoding}" (gzip or none)`);
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (encoding === 'identity' && declared > max)
    throw new HttpError(413, `the body is ${declared} bytes; the limit is ${max}`);
  const gunzip = encoding === 'gzip' ? createGunzip() : undefined;
  const source = gunzip ? req.pipe(gunzip) : req;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Events, not `for await`: leaving a for-await loop destroys the stream, and with it the connection, so the
    // client would get a reset instead of the answer.
    await new Promise<void>((resolve, reject) => {
      const stop = (e: Error) => {
        source.off('data', onData);
        // Unpiped now, not when the gunzip stream closes (a tick later, which would pause the request again):
        // the rest of the body is drained, so a kept-alive connection is usable for the next request.
        if (gunzip) {
          req.unpipe(gunzip);
          gunzip.destroy();
        }
        req.resume();
        reject(e);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (budget) budget.used += chunk.length;
        if (budget && budget.used > budget.max)
          return stop(
            new HttpError(503, `the server holds ${budget.max} bytes of request bodies being read; retry shortly`, {
              'retry-after': '1',
            }),
          );
        if (size > max)
          return stop(
            new HttpError(413, `the body is over ${max} bytes${encoding === 'gzip' ? ' (after gunzip)' : ''}`),
          );
        chunks.push(chunk);
      };
      source.on('data', onData);
      source.once('end', () => resolve());
      source.once('error', (e) => reject(e));
      if (gunzip) req.once('error', (e) => reject(e));
      req.once('close', () => {
        if (!req.complete) reject(new Error('the client closed the connection'));
      });
    });
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(400, `the body could not be read: ${(e as Error).message}`);
  } finally {
    if (budget) budget.used -= size;
  }
  return Buffer.concat(chunks);
};

/** A JSON array, or NDJSON (one value per line). Each item keeps its 0-based index (array) or line - 1 (NDJSON). */
export const splitItems = (text: string, contentType: string): { index: number; value?: unknown; error?: string }[] => {
  const body = text.replace(/^\uFEFF/, '');
  if (contentType === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw new HttpError(400, `the body is not valid JSON: ${(e as Error).message}`);
    }
    const items = Array.isArray(parsed) ? parsed : [parsed];
    return items.map((value, index) => ({ index, value }));
  }
  const out: { index: number; value?: unknown; error?: string }[] = [];
  body.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      out.push({ index, value: JSON.parse(line) });
    } catch (e) {
      out.push({ index, error: `not valid JSON: ${(e as Error).message}` });
    }
  });
  return out;
};

const CONTENT_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/jsonl', 'application/ndjson']);

const fieldOf = (e: unknown): { field: string; reason: string } | undefined => {
  if (e instanceof InvalidRecord)
    return {
      field: e.issues[0]?.field ?? '(root)',
      reason: e.issues.map((i) => (e.issues.length > 1 ? `${i.field}: ${i.message}` : i.message)).join('; '),
    };
  if (e instanceof InputError)
    return { field: e.where.field ?? '(root)', reason: e.message.replace(/^.*?field [^:]*: /, '') };
  return undefined;
};

type Item = { index: number; value?: unknown; error?: string };
type Built = { index: number; event: PasskEvent } | { index: number; field: string; reason: string };

/**
 * Validates every item into its event exactly as the SDK does: trials through the flat trial format's reader,
 * the rest through the SDK's recorder (over a publisher that only collects), so the schemas and the
 * deterministic event ids are the SDK's own.
 */
export const buildEvents = async (
  kind: IngestKind,
  items: readonly Item[],
  target?: DatasetTarget,
  now: () => number = Date.now,
  redactors?: readonly Redactor[],
): Promise<Built[]> => {
  const out: Built[] = [];
  if (kind === 'datasets') return items.map((it) => datasetRowEvent(it, target!, now()));
  if (kind === 'trials') {
    for (const it of items) {
      if (it.error !== undefined) {
        out.push({ index: it.index, field: '(root)', reason: it.error });
        continue;
      }
      try {
        out.push({
          index: it.index,
          // a trial without occurred_at happened when it was received
          event: {
            ...parseTrialRecord(it.value, { file: 'item', line: it.index }, {}, now()),
            producer: INGEST_PRODUCER,
          },
        });
      } catch (e) {
        const f = fieldOf(e);
        if (!f) throw e;
        out.push({ index: it.index, ...f });
      }
    }
    return out;
  }
  const sink = createMemoryPublisher({ maxEventBytes: Number.MAX_SAFE_INTEGER });
  const recorder = createRecorder({
    publisher: sink,
    producer: INGEST_PRODUCER,
    maxBatch: 1_000_000,
    maxBuffered: Infinity,
    ...(redactors ? { redactors } : {}),
  });
  const record = (v: unknown) =>
    kind === 'traces'
      ? recorder.recordTrace(v as never)
      : kind === 'judgments'
        ? recorder.recordJudgment(v as never)
        : recorder.recordLabel(v as never);
  const accepted: number[] = [];
  for (const it of items) {
    if (it.error !== undefined) {
      out.push({ index: it.index, field: '(root)', reason: it.error });
      continue;
    }
    try {
      record(it.value).catch(() => undefined);
      accepted.push(out.length);
      out.push({ index: it.index, field: '', reason: '' });
    } catch (e) {
      const f = fieldOf(e);
      if (!f) throw e;
      out.push({ index: it.index, ...f });
    }
  }
  await recorder.close();
  accepted.forEach((slot, i) => (out[slot] = { index: out[slot]!.index, event: sink.events[i]! }));
  return out;
};

/**
 * A dataset row (the runner's row: `id`, `input`, `expected`, `tags`) as the DatasetRowUpserted that
 * `passk dataset publish` writes. The event id depends on the dataset, version and row only: a version's rows are
 * immutable, so the same row id sent again to the same version is a duplicate.
 */
const datasetRowEvent = (it: Item, target: DatasetTarget, now: number): Built => {
  if (it.error !== undefined) return { index: it.index, field: '(root)', reason: it.error };
  const r = DatasetRow.safeParse(it.value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return { index: it.index, field: issue.path.map(String).join('.') || '(root)', reason: issue.message };
  }
  const event = DatasetRowUpserted.safeParse({
    event_id: deterministicEventId(0, 'DatasetRowUpserted', target.datasetId, target.version, r.data.id),
    type: 'DatasetRowUpserted',
    schema_version: 1,
    occurred_at: now,
    producer: INGEST_PRODUCER,
    dataset_id: target.datasetId,
    dataset_version: target.version,
    row_id: r.data.id,
    ...publishedRowOf(r.data),
    provenance: { kind: 'import', note: 'ingest API' },
  });
  if (!event.success) {
    const issue = event.error.issues[0]!;
    return { index: it.index, field: issue.path.map(String).join('.') || '(root)', reason: issue.message };
  }
  return { index: it.index, event: event.data };
};

/** The dataset id of `/api/v1/datasets/{id}/rows` and the `version` of its query, checked. */
const datasetTarget = (rawId: string, search: URLSearchParams): DatasetTarget => {
  let datasetId: string;
  try {
    datasetId = decodeURIComponent(rawId);
  } catch {
    throw new HttpError(400, `the dataset id in the path is not valid percent-encoding: "${rawId}"`);
  }
  const version = search.get('version');
  if (!Id.safeParse(datasetId).success) throw new HttpError(400, 'the dataset id must be 1–512 characters');
  if (version === null || !Id.safeParse(version).success)
    throw new HttpError(
      400,
      'name the dataset version the rows belong to: ?version=V (1–512 characters; a version is immutable)',
    );
  return { datasetId, version };
};

/** Handles `/api/v1/*` ingest requests; returns false for any other path (the caller serves it). */
export const createIngestRoutes = (opts: IngestOptions) => {
  const max = opts.maxBodyBytes ?? 16 * 1024 * 1024;
  const maxOtlp = opts.maxOtlpBodyBytes ?? 64 * 1024 * 1024;
  const maxItems = opts.maxItems ?? 10_000;
  const maxInFlight = opts.maxInFlight ?? 16;
  const metrics = opts.metrics ?? createIngestMetrics();
  /** Takes a write slot, once the body is in (429 when all are taken). */
  const takeSlot = () => {
    if (inFlight >= maxInFlight)
      throw new HttpError(429, `${inFlight} requests are being written; retry shortly`, { 'retry-after': '1' });
    inFlight++;
    metrics.inFlight = inFlight;
  };
  const freeSlot = () => {
    inFlight--;
    metrics.inFlight = inFlight;
  };
  const budget = { used: 0, max: opts.maxReadingBytes ?? 512 * 1024 * 1024 };
  const reading = async (req: IncomingMessage, limit: number) => {
    metrics.reading++;
    try {
      return await readBody(req, limit, budget);
    } finally {
      metrics.reading--;
    }
  };
  const remember = opts.rememberIds ?? 1_000_000;
  const seen = new Set<string>();
  const onError = opts.onError ?? ((e: unknown) => process.stderr.write(`ingest: ${(e as Error).message}\n`));
  let inFlight = 0;

  const note = (id: string) => {
    seen.add(id);
    if (seen.size > remember) seen.delete(seen.values().next().value!);
  };
  /** Trials acknowledged recently (or read from the log at start), by attempt slot: one answer per trial identity. */
  const slots = createSlotMemory(remember);
  /**
   * The log's trials read into `slots` (the conflict memory) before any trial is answered. A read that failed (the log
   * away at start) is read again at the next trial request, which is answered 503 meanwhile: with a part of the log
   * remembered, a conflicting re-send would be accepted, and only the processors' dead letter would catch it.
   */
  const readKnown = (): Promise<void> =>
    opts
      .knownTrials?.((t) => {
        slots.note(t);
        note(t.event_id);
      })
      .then(() => undefined) ?? Promise.resolve();
  let known = readKnown();
  known.catch((e: unknown) =>
    onError(new Error(`reading the log's trials at start: ${(e as Error).message}`, { cause: e })),
  );
  const knownTrials = async () => {
    const reading = known;
    try {
      await reading;
    } catch (e) {
      if (known === reading) (known = readKnown()).catch(() => {});
      throw new HttpError(
        503,
        `the log's trials could not be read, so a re-sent trial cannot be checked: ${(e as Error).message}`,
        { 'retry-after': '1' },
      );
    }
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
    });
    res.end(JSON.stringify(body));
  };

  const ingest = async (
    kind: IngestKind,
    req: IncomingMessage,
    target?: DatasetTarget,
  ): Promise<{ status: number; body: IngestAnswer }> => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!CONTENT_TYPES.has(type))
      throw new HttpError(
        415,
        `Content-Type must be application/json or application/x-ndjson, got "${type || '(none)'}"`,
      );
    const body = await reading(req, max);
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
    let decoded: string;
    try {
      decoded = text.decode(body);
    } catch {
      throw new HttpError(400, 'the body is not valid UTF-8');
    }
    if (type !== 'application/json') {
      // Counted before parsing: a body of a million tiny lines is refused without the work.
      let lines = 0;
      for (let i = decoded.indexOf('\n'); i >= 0 && lines <= maxItems; i = decoded.indexOf('\n', i + 1)) lines++;
      if (lines > maxItems) throw tooMany(`more than ${maxItems}`);
    }
    const items = splitItems(decoded, type);
    if (items.length === 0) throw new HttpError(400, 'the body holds no items');
    if (items.length > maxItems) throw tooMany(String(items.length));
    takeSlot();
    try {
      return await write(kind, items, target);
    } finally {
      freeSlot();
    }
  };
  const tooMany = (n: string) =>
    new HttpError(413, `the body holds ${n} items; the limit is ${maxItems} per request: send smaller batches`);

  /** Publishes the valid items; when the log refuses the batch for one item (its size, its text), item by item. */
  const publishEach = async (events: readonly PasskEvent[]): Promise<Map<PasskEvent, string>> => {
    const refused = new Map<PasskEvent, string>();
    try {
      await opts.publisher.publish(events);
      return refused;
    } catch (e) {
      if (!(e instanceof PipelineError) || e.retriable || events.length === 1) {
        if (events.length === 1 && e instanceof PipelineError && !e.retriable) refused.set(events[0]!, e.message);
        else throw e;
        return refused;
      }
    }
    // Halves, so one refused item among n costs about 2·log2(n) more calls, not n.
    const mid = Math.ceil(events.length / 2);
    for (const part of [events.slice(0, mid), events.slice(mid)])
      for (const [ev, why] of await publishEach(part)) refused.set(ev, why);
    return refused;
  };

  const write = async (
    kind: IngestKind,
    items: readonly Item[],
    target?: DatasetTarget,
  ): Promise<{ status: number; body: IngestAnswer }> => {
    const built = await buildEvents(kind, items, target, Date.now, opts.redactors);
    const results: ItemResult[] = [];
    const toPublish: PasskEvent[] = [];
    const inBatch = new Set<string>();
    const batchSlots = createSlotMemory(Number.MAX_SAFE_INTEGER);
    for (const b of built) {
      if (!('event' in b)) {
        results.push({ index: b.index, status: 'rejected', field: b.field, reason: b.reason });
        continue;
      }
      const id = b.event.event_id;
      if (b.event.type === 'TrialRecorded') {
        // one answer per trial identity: the same attempt again with other content (or under another event id)
        // is a conflict, refused, whatever was sent first; the same content is a duplicate
        const t = b.event;
        await knownTrials();
        const conflict = batchSlots.conflictOf(t) ?? slots.conflictOf(t);
        if (conflict) {
          results.push({ index: b.index, status: 'rejected', field: conflict.field, reason: conflict.reason });
          continue;
        }
        batchSlots.note(t);
      }
      const dup = inBatch.has(id) || seen.has(id);
      results.push({ index: b.index, status: dup ? 'duplicate' : 'accepted', event_id: id });
      if (!dup) {
        inBatch.add(id);
        toPublish.push(b.event);
      }
    }
    if (toPublish.length > 0) {
      let refused: Map<PasskEvent, string>;
      try {
        refused = await publishEach(toPublish);
      } catch (e) {
        if (e instanceof PipelineError && e.retriable)
          throw new HttpError(503, `the event log is unavailable: ${e.message}`, { 'retry-after': '1' });
        throw e;
      }
      if (refused.size > 0) {
        const byId = new Map([...refused].map(([ev, why]) => [ev.event_id, why]));
        for (const [i, r] of results.entries()) {
          const why = r.status === 'accepted' ? byId.get(r.event_id) : undefined;
          if (why !== undefined) {
            results[i] = { index: r.index, status: 'rejected', field: '(root)', reason: why };
            byId.delete((r as { event_id: string }).event_id);
          }
        }
      }
      for (const e of toPublish)
        if (!refused.has(e)) {
          note(e.event_id);
          if (e.type === 'TrialRecorded') slots.note(e);
        }
    }
    const answer: IngestAnswer = {
      accepted: results.filter((r) => r.status === 'accepted').length,
      duplicates: results.filter((r) => r.status === 'duplicate').length,
      rejected: results.filter((r) => r.status === 'rejected').length,
      items: results,
    };
    bump(metrics.items, `${kind}|accepted`, answer.accepted);
    bump(metrics.items, `${kind}|duplicate`, answer.duplicates);
    bump(metrics.items, `${kind}|rejected`, answer.rejected);
    const status = answer.rejected === 0 ? 200 : answer.rejected === results.length ? 400 : 207;
    return { status, body: answer };
  };

  let receiver: OtlpReceiver | undefined;
  const OTLP_TYPES: Record<string, 'protobuf' | 'json'> = {
    'application/x-protobuf': 'protobuf',
    'application/protobuf': 'protobuf',
    'application/json': 'json',
  };
  /** OTLP/HTTP: Export{Trace,Logs}ServiceResponse on success, a google.rpc.Status on failure, in the request's encoding. */
  const otlp = async (signal: 'traces' | 'logs', req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const format = OTLP_TYPES[type];
    const answer = (status: number, body: Uint8Array | string, headers: Record<string, string> = {}) => {
      bump(metrics.requests, `otlp_${signal}|${status}`);
      res.writeHead(status, {
        'content-type': format === 'protobuf' ? 'application/x-protobuf' : 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        ...headers,
      });
      res.end(body);
    };
    try {
      if (req.method !== 'POST') throw new HttpError(405, 'only POST', { allow: 'POST' });
      authorize(req);
      if (!format)
        throw new HttpError(
          415,
          `Content-Type must be application/x-protobuf or application/json, got "${type || '(none)'}"`,
        );
      const body = await reading(req, maxOtlp);
      takeSlot();
      try {
        const receiver = receiverOf();
        let result;
        try {
          result = await receiver.export(body, format, signal);
        } catch (e) {
          if (e instanceof MalformedOtlp) throw new HttpError(400, e.message);
          if (e instanceof PipelineError && e.retriable)
            throw new HttpError(503, `the event log is unavailable: ${e.message}`, { 'retry-after': '1' });
          throw e;
        }
        answer(200, encodeResponse(format, { spans: result.rejected, message: result.message }, signal));
      } finally {
        freeSlot();
      }
    } catch (e) {
      if (!req.complete) req.resume();
      if (!(e instanceof HttpError)) onError(e);
      const status = e instanceof HttpError ? e.status : 500;
      const message = e instanceof Error ? e.message : String(e);
      // google.rpc.Code: 3 INVALID_ARGUMENT, 16 UNAUTHENTICATED, 8 RESOURCE_EXHAUSTED, 14 UNAVAILABLE, 13 INTERNAL.
      const code = { 400: 3, 401: 16, 413: 3, 415: 3, 405: 12, 429: 8, 503: 14 }[status] ?? 13;
      answer(status, encodeStatus(format ?? 'json', code, message), e instanceof HttpError ? e.headers : {});
    }
  };
  const receiverOf = (): OtlpReceiver => {
    receiver ??= createOtlpReceiver({
      publisher: opts.publisher,
      ...(opts.redactors ? { redactors: opts.redactors } : {}),
      ...opts.otlp,
      onError,
    });
    metrics.receiver = receiver;
    return receiver;
  };

  const authorize = (req: IncomingMessage): void => {
    // the scheme is case-insensitive (RFC 7235): `bearer …` is a bearer token too
    const bearer = /^bearer +(\S.*)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
    if (opts.token === undefined)
      throw new HttpError(401, 'writes are disabled: start the server with a write token (PASSK_INGEST_TOKEN)');
    if (bearer === undefined || !sameToken(bearer, opts.token))
      throw new HttpError(401, 'a valid write token is required (Authorization: Bearer …)', {
        'www-authenticate': 'Bearer',
      });
  };

  let openapi: string | undefined;
  const handle = async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    if (pathname === '/api/v1/openapi.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      openapi ??= JSON.stringify(ingestOpenApi(), null, 2);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : openapi);
      return true;
    }
    if (pathname === '/v1/traces' || pathname === '/v1/logs') {
      await otlp(pathname === '/v1/traces' ? 'traces' : 'logs', req, res);
      return true;
    }
    const m = /^\/api\/v1\/(?:(trials|traces|judgments|labels)|datasets\/([^/]+)\/rows)$/.exec(pathname);
    if (!m) return false;
    try {
      if (req.method !== 'POST') throw new HttpError(405, 'only POST', { allow: 'POST' });
      authorize(req);
      const target =
        m[2] === undefined ? undefined : datasetTarget(m[2], new URL(req.url ?? '/', 'http://ingest').searchParams);
      const { status, body } = await ingest((m[1] ?? 'datasets') as IngestKind, req, target);
      bump(metrics.requests, `${m[1] ?? 'datasets'}|${status}`);
      send(res, status, body);
    } catch (e) {
      bump(metrics.requests, `${m[1] ?? 'datasets'}|${e instanceof HttpError ? e.status : 500}`);
      if (e instanceof HttpError) {
        if (!req.complete) req.resume();
        send(res, e.status, { error: e.message }, e.headers);
      } else {
        onError(e);
        send(res, 500, { error: e instanceof Error ? e.message : String(e) });
      }
    }
    return true;
  };
  /** Stops the OTLP receiver (closing a capped policy's open windows, flushing what they kept). */
  const close = async (): Promise<void> => {
    await receiver?.close();
  };
  return Object.assign(handle, { close, metrics, receiver: receiverOf });
};
