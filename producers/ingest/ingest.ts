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
import { EventTooLarge, InputError, PipelineError } from '../../schemas/errors.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { DatasetRowUpserted } from '../../schemas/events/datasets.ts';
import { Id } from '../../schemas/envelope.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
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
  /** Largest request body, after gunzip. @default 16 MiB */
  readonly maxBodyBytes?: number;
  /** Requests publishing at once; beyond that the answer is 429 with Retry-After. @default 16 */
  readonly maxInFlight?: number;
  /** Event ids acknowledged recently, remembered to answer `duplicate`. @default 1_000_000 */
  readonly rememberIds?: number;
  /** The redactors of traces, on `/api/v1/traces` and `POST /v1/traces`. @default DEFAULT_REDACTORS */
  readonly redactors?: readonly Redactor[];
  /** The OTLP receiver at `POST /v1/traces`: its sampling policy and redactors (default: keep every trace). */
  readonly otlp?: Omit<OtlpReceiverOptions, 'publisher' | 'onError'>;
  readonly onError?: (e: unknown) => void;
}

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
export const readBody = async (req: IncomingMessage, max: number): Promise<Buffer> => {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip')
    throw new HttpError(415, `unsupported Content-Encoding "${encoding}" (gzip or none)`);
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (encoding === 'identity' && declared > max)
    throw new HttpError(413, `the body is ${declared} bytes; the limit is ${max}`);
  const source = encoding === 'gzip' ? req.pipe(createGunzip()) : req;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) {
        req.resume();
        throw new HttpError(413, `the body is over ${max} bytes${encoding === 'gzip' ? ' (after gunzip)' : ''}`);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(400, `the body could not be read: ${(e as Error).message}`);
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
          event: { ...parseTrialRecord(it.value, { file: 'item', line: it.index }), producer: INGEST_PRODUCER },
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
  const maxInFlight = opts.maxInFlight ?? 16;
  const remember = opts.rememberIds ?? 1_000_000;
  const seen = new Set<string>();
  const onError = opts.onError ?? ((e: unknown) => process.stderr.write(`ingest: ${(e as Error).message}\n`));
  let inFlight = 0;

  const note = (id: string) => {
    seen.add(id);
    if (seen.size > remember) seen.delete(seen.values().next().value!);
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
    const body = await readBody(req, max);
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
    let decoded: string;
    try {
      decoded = text.decode(body);
    } catch {
      throw new HttpError(400, 'the body is not valid UTF-8');
    }
    const items = splitItems(decoded, type);
    if (items.length === 0) throw new HttpError(400, 'the body holds no items');
    const built = await buildEvents(kind, items, target, Date.now, opts.redactors);
    const results: ItemResult[] = [];
    const toPublish: PasskEvent[] = [];
    const inBatch = new Set<string>();
    for (const b of built) {
      if (!('event' in b)) {
        results.push({ index: b.index, status: 'rejected', field: b.field, reason: b.reason });
        continue;
      }
      const id = b.event.event_id;
      const dup = inBatch.has(id) || seen.has(id);
      results.push({ index: b.index, status: dup ? 'duplicate' : 'accepted', event_id: id });
      if (!dup) {
        inBatch.add(id);
        toPublish.push(b.event);
      }
    }
    if (toPublish.length > 0) {
      try {
        await opts.publisher.publish(toPublish);
      } catch (e) {
        if (e instanceof EventTooLarge) throw new HttpError(413, e.message);
        if (e instanceof PipelineError && e.retriable)
          throw new HttpError(503, `the event log is unavailable: ${e.message}`, { 'retry-after': '1' });
        throw e;
      }
      for (const e of toPublish) note(e.event_id);
    }
    const answer: IngestAnswer = {
      accepted: results.filter((r) => r.status === 'accepted').length,
      duplicates: results.filter((r) => r.status === 'duplicate').length,
      rejected: results.filter((r) => r.status === 'rejected').length,
      items: results,
    };
    const status = answer.rejected === 0 ? 200 : answer.rejected === results.length ? 400 : 207;
    return { status, body: answer };
  };

  let receiver: OtlpReceiver | undefined;
  const OTLP_TYPES: Record<string, 'protobuf' | 'json'> = {
    'application/x-protobuf': 'protobuf',
    'application/protobuf': 'protobuf',
    'application/json': 'json',
  };
  /** OTLP/HTTP: ExportTraceServiceResponse on success, a google.rpc.Status on failure, in the request's encoding. */
  const otlp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const format = OTLP_TYPES[type];
    const answer = (status: number, body: Uint8Array | string, headers: Record<string, string> = {}) => {
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
      if (inFlight >= maxInFlight)
        throw new HttpError(429, `${inFlight} requests are being written; retry shortly`, { 'retry-after': '1' });
      inFlight++;
      try {
        const body = await readBody(req, max);
        receiver ??= createOtlpReceiver({
          publisher: opts.publisher,
          ...(opts.redactors ? { redactors: opts.redactors } : {}),
          ...opts.otlp,
          onError,
        });
        let result;
        try {
          result = await receiver.export(body, format);
        } catch (e) {
          if (e instanceof MalformedOtlp) throw new HttpError(400, e.message);
          if (e instanceof PipelineError && e.retriable)
            throw new HttpError(503, `the event log is unavailable: ${e.message}`, { 'retry-after': '1' });
          throw e;
        }
        answer(200, encodeResponse(format, { spans: result.rejected, message: result.message }));
      } finally {
        inFlight--;
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
    if (pathname === '/v1/traces') {
      await otlp(req, res);
      return true;
    }
    const m = /^\/api\/v1\/(?:(trials|traces|judgments|labels)|datasets\/([^/]+)\/rows)$/.exec(pathname);
    if (!m) return false;
    try {
      if (req.method !== 'POST') throw new HttpError(405, 'only POST', { allow: 'POST' });
      authorize(req);
      const target =
        m[2] === undefined ? undefined : datasetTarget(m[2], new URL(req.url ?? '/', 'http://ingest').searchParams);
      if (inFlight >= maxInFlight)
        throw new HttpError(429, `${inFlight} requests are being written; retry shortly`, { 'retry-after': '1' });
      inFlight++;
      try {
        const { status, body } = await ingest((m[1] ?? 'datasets') as IngestKind, req, target);
        send(res, status, body);
      } finally {
        inFlight--;
      }
    } catch (e) {
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
  return Object.assign(handle, { close });
};
