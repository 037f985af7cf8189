/**
 * OTLP/HTTP trace and log export bodies, decoded with protobufjs from the protocol's own `.proto` files (`proto/`, from
 * the OpenTelemetry project's published artifact): `application/x-protobuf` through the binary decoder, and
 * `application/json` (the OTLP JSON mapping: lowerCamelCase names, hex trace and span ids) through the same
 * message types' `fromObject`, so both encodings come out as the same plain object.
 */
import { fileURLToPath } from 'node:url';
import { isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';

const PROTO_DIR = fileURLToPath(new URL('./proto/', import.meta.url));

let types:
  | {
      request: protobuf.Type;
      response: protobuf.Type;
      logsRequest: protobuf.Type;
      logsResponse: protobuf.Type;
      status: protobuf.Type;
    }
  | undefined;
const load = () => {
  if (types) return types;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(PROTO_DIR, target));
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  root.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto');
  // google.rpc.Status, the body of an OTLP error answer (its two scalar fields; `details` is left empty).
  const status = new protobuf.Type('Status')
    .add(new protobuf.Field('code', 1, 'int32'))
    .add(new protobuf.Field('message', 2, 'string'));
  new protobuf.Root().define('google.rpc').add(status);
  types = {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    logsRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    logsResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    status,
  };
  return types;
};

/** An attribute value (OTLP AnyValue), as decoded. */
export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
}
export interface KeyValue {
  key: string;
  value?: AnyValue;
}
export interface OtlpSpan {
  /** Lowercase hex. */
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  /** Bits 8 and 9: whether the parent's remoteness is known, and whether the parent is remote (another process). */
  flags?: number;
  /** Decimal strings (int64). */
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: KeyValue[];
  events?: { timeUnixNano?: string; name?: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}
export interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string; version?: string }; spans?: OtlpSpan[] }[];
  }[];
}
export interface OtlpLogRecord {
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  /** The event's name (`gen_ai.user.message`, …); older SDKs put it in the `event.name` attribute. */
  eventName?: string;
  body?: AnyValue;
  attributes?: KeyValue[];
  /** Lowercase hex; empty when the record was emitted outside a span. */
  traceId?: string;
  spanId?: string;
}
export interface OtlpLogsRequest {
  resourceLogs?: {
    resource?: { attributes?: KeyValue[] };
    scopeLogs?: { scope?: { name?: string; version?: string }; logRecords?: OtlpLogRecord[] }[];
  }[];
}

/** The body could not be read as an export request. */
export class MalformedOtlp extends Error {
  override name = 'MalformedOtlp';
}

export type Signal = 'traces' | 'logs';
const NAMES: Record<Signal, string> = { traces: 'ExportTraceServiceRequest', logs: 'ExportLogsServiceRequest' };
const requestType = (signal: Signal) => (signal === 'traces' ? load().request : load().logsRequest);

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** The bytes of a `bytes` field as protobufjs gives them: a Buffer (or Uint8Array) view, or an array from JSON. */
const bytesOf = (v: Uint8Array | number[]): Buffer =>
  Array.isArray(v) ? Buffer.from(v) : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/**
 * Binary ids to hex and `bytesValue` to base64, every other field as protobufjs gives it (int64 as decimal strings;
 * any other `bytes` field as an array of numbers). `toObject` made the tree, so it is converted in place, and its
 * `bytes` are left as the decoder's views (no array of numbers per id): a copy of every request was a tenth of the
 * receiver's time in garbage (issue #25).
 */
const toPlain = (signal: Signal, message: protobuf.Message): unknown => {
  const obj = requestType(signal).toObject(message, { longs: String, enums: Number, defaults: false });
  const hex = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const v of node) hex(v);
      return;
    }
    const o = node as Record<string, unknown>;
    for (const k in o) {
      const v = o[k];
      if (typeof v !== 'object' || v === null) continue;
      const bytes = v instanceof Uint8Array;
      if (ID_FIELDS.has(k) && (bytes || Array.isArray(v))) o[k] = bytesOf(v as Uint8Array).toString('hex');
      else if (k === 'bytesValue' && (bytes || Array.isArray(v))) o[k] = bytesOf(v as Uint8Array).toString('base64');
      else if (bytes) o[k] = Array.from(v);
      else hex(v);
    }
  };
  hex(obj);
  return obj;
};

/* The trace request straight from protobufjs's decoded message (issue #25): the same plain object `toPlain` makes
 * (`toObject` with int64 as decimal strings, enums as numbers, no defaults; then ids to hex and `bytesValue` to
 * base64), key for key in the same order (field number order, as `toObject` writes them), without `toObject`'s tree
 * and the walk over it. A field is there when the message holds it as its own property (proto3: set on the wire,
 * not the prototype's default), a repeated field when it has items. `decode.unit.test.ts` compares the two on
 * requests with every field, random values and damaged bodies. */
type Msg = Record<string, unknown>;
const own = Object.prototype.hasOwnProperty;
const has = (m: Msg, k: string): boolean => m[k] != null && own.call(m, k);
const TWO_32 = 4_294_967_296;
/** An int64 or fixed64 as protobufjs's `Long.prototype.toString` writes it (a number when it fits: the same digits). */
const longText = (v: unknown): string => {
  if (typeof v === 'number') return String(v);
  const { low, high, unsigned } = v as { low: number; high: number; unsigned: boolean };
  if (unsigned) {
    const h = high >>> 0;
    return h < 0x200000 ? String(h * TWO_32 + (low >>> 0)) : ((BigInt(h) << 32n) | BigInt(low >>> 0)).toString();
  }
  if (high >= -0x200000 && high < 0x200000) return String(high * TWO_32 + (low >>> 0));
  return BigInt.asIntN(64, (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0)).toString();
};
const hexOf = (v: unknown): unknown =>
  v instanceof Uint8Array || Array.isArray(v) ? bytesOf(v as Uint8Array).toString('hex') : v;
const listOf = <T>(m: Msg, k: string, each: (x: Msg) => T): T[] | undefined => {
  const xs = m[k] as Msg[] | undefined;
  if (!xs || xs.length === 0) return undefined;
  const out = new Array<T>(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = each(xs[i]!);
  return out;
};
const anyValueOf = (m: Msg): AnyValue => {
  const d: Msg = {};
  if (has(m, 'stringValue')) d.stringValue = m.stringValue;
  if (has(m, 'boolValue')) d.boolValue = m.boolValue;
  if (has(m, 'intValue')) d.intValue = longText(m.intValue);
  if (has(m, 'doubleValue')) d.doubleValue = m.doubleValue;
  if (has(m, 'arrayValue')) {
    const a: Msg = {};
    const values = listOf(m.arrayValue as Msg, 'values', anyValueOf);
    if (values) a.values = values;
    d.arrayValue = a;
  }
  if (has(m, 'kvlistValue')) {
    const l: Msg = {};
    const values = listOf(m.kvlistValue as Msg, 'values', keyValueOf);
    if (values) l.values = values;
    d.kvlistValue = l;
  }
  if (has(m, 'bytesValue')) {
    const b = m.bytesValue;
    d.bytesValue = b instanceof Uint8Array || Array.isArray(b) ? bytesOf(b as Uint8Array).toString('base64') : b;
  }
  return d as AnyValue;
};
const keyValueOf = (m: Msg): KeyValue => {
  const d: Msg = {};
  if (has(m, 'key')) d.key = m.key;
  if (has(m, 'value')) d.value = anyValueOf(m.value as Msg);
  return d as unknown as KeyValue;
};
/** Copies the fields `names` (in field number order) that are set; `attributes`-like lists of KeyValue converted. */
const scalars = (m: Msg, d: Msg, names: readonly string[]): void => {
  for (const k of names) if (has(m, k)) d[k] = m[k];
};
const attributesInto = (m: Msg, d: Msg, k: string): void => {
  const xs = listOf(m, k, keyValueOf);
  if (xs) d[k] = xs;
};
const stringsOf = (m: Msg, k: string): string[] | undefined => {
  const xs = m[k] as string[] | undefined;
  return xs && xs.length ? xs.slice() : undefined;
};
const entityRefOf = (m: Msg): Msg => {
  const d: Msg = {};
  scalars(m, d, ['schemaUrl', 'type']);
  const ids = stringsOf(m, 'idKeys');
  if (ids) d.idKeys = ids;
  const descriptions = stringsOf(m, 'descriptionKeys');
  if (descriptions) d.descriptionKeys = descriptions;
  return d;
};
const resourceOf = (m: Msg): Msg => {
  const d: Msg = {};
  attributesInto(m, d, 'attributes');
  if (has(m, 'droppedAttributesCount')) d.droppedAttributesCount = m.droppedAttributesCount;
  const refs = listOf(m, 'entityRefs', entityRefOf);
  if (refs) d.entityRefs = refs;
  return d;
};
const scopeOf = (m: Msg): Msg => {
  const d: Msg = {};
  scalars(m, d, ['name', 'version']);
  attributesInto(m, d, 'attributes');
  if (has(m, 'droppedAttributesCount')) d.droppedAttributesCount = m.droppedAttributesCount;
  return d;
};
const eventOf = (m: Msg): Msg => {
  const d: Msg = {};
  if (has(m, 'timeUnixNano')) d.timeUnixNano = longText(m.timeUnixNano);
  if (has(m, 'name')) d.name = m.name;
  attributesInto(m, d, 'attributes');
  if (has(m, 'droppedAttributesCount')) d.droppedAttributesCount = m.droppedAttributesCount;
  return d;
};
const linkOf = (m: Msg): Msg => {
  const d: Msg = {};
  if (has(m, 'traceId')) d.traceId = hexOf(m.traceId);
  if (has(m, 'spanId')) d.spanId = hexOf(m.spanId);
  if (has(m, 'traceState')) d.traceState = m.traceState;
  attributesInto(m, d, 'attributes');
  scalars(m, d, ['droppedAttributesCount', 'flags']);
  return d;
};
const statusOf = (m: Msg): Msg => {
  const d: Msg = {};
  scalars(m, d, ['message', 'code']);
  return d;
};
const spanOf = (m: Msg): OtlpSpan => {
  const d: Msg = {};
  if (has(m, 'traceId')) d.traceId = hexOf(m.traceId);
  if (has(m, 'spanId')) d.spanId = hexOf(m.spanId);
  if (has(m, 'traceState')) d.traceState = m.traceState;
  if (has(m, 'parentSpanId')) d.parentSpanId = hexOf(m.parentSpanId);
  scalars(m, d, ['name', 'kind']);
  if (has(m, 'startTimeUnixNano')) d.startTimeUnixNano = longText(m.startTimeUnixNano);
  if (has(m, 'endTimeUnixNano')) d.endTimeUnixNano = longText(m.endTimeUnixNano);
  attributesInto(m, d, 'attributes');
  if (has(m, 'droppedAttributesCount')) d.droppedAttributesCount = m.droppedAttributesCount;
  const events = listOf(m, 'events', eventOf);
  if (events) d.events = events;
  if (has(m, 'droppedEventsCount')) d.droppedEventsCount = m.droppedEventsCount;
  const links = listOf(m, 'links', linkOf);
  if (links) d.links = links;
  if (has(m, 'droppedLinksCount')) d.droppedLinksCount = m.droppedLinksCount;
  if (has(m, 'status')) d.status = statusOf(m.status as Msg);
  if (has(m, 'flags')) d.flags = m.flags;
  return d as unknown as OtlpSpan;
};
const scopeSpansOf = (m: Msg): Msg => {
  const d: Msg = {};
  if (has(m, 'scope')) d.scope = scopeOf(m.scope as Msg);
  const spans = listOf(m, 'spans', spanOf);
  if (spans) d.spans = spans;
  if (has(m, 'schemaUrl')) d.schemaUrl = m.schemaUrl;
  return d;
};
const resourceSpansOf = (m: Msg): Msg => {
  const d: Msg = {};
  if (has(m, 'resource')) d.resource = resourceOf(m.resource as Msg);
  const scopes = listOf(m, 'scopeSpans', scopeSpansOf);
  if (scopes) d.scopeSpans = scopes;
  if (has(m, 'schemaUrl')) d.schemaUrl = m.schemaUrl;
  return d;
};
/** A decoded ExportTraceServiceRequest as `toPlain` gives it, built directly. */
const traceRequestOf = (m: protobuf.Message): OtlpRequest => {
  const d: Msg = {};
  const rs = listOf(m as unknown as Msg, 'resourceSpans', resourceSpansOf);
  if (rs) d.resourceSpans = rs;
  return d as OtlpRequest;
};

const decodeBinary = (signal: Signal, body: Uint8Array): unknown => {
  try {
    const message = requestType(signal).decode(body);
    return signal === 'traces' ? traceRequestOf(message) : toPlain(signal, message);
  } catch (e) {
    throw new MalformedOtlp(`the body is not an OTLP ${NAMES[signal]} (protobuf): ${(e as Error).message}`);
  }
};

/** OTLP/JSON: ids are hex strings (the JSON mapping's one difference from protobuf's JSON), the rest as proto3 JSON. */
const decodeText = (signal: Signal, text: string): unknown => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new MalformedOtlp(`the body is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new MalformedOtlp(`the body is not an OTLP ${NAMES[signal]} (JSON): expected an object`);
  const ids = (node: unknown, path: string): unknown => {
    if (Array.isArray(node)) return node.map((v, i) => ids(v, `${path}[${i}]`));
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (ID_FIELDS.has(k) && typeof v === 'string') {
        if (!/^(?:[0-9a-fA-F]{2})*$/.test(v))
          throw new MalformedOtlp(`${path}.${k}: not a hex id: "${v.slice(0, 40)}"`);
        out[k] = Buffer.from(v, 'hex');
      } else out[k] = ids(v, `${path}.${k}`);
    }
    return out;
  };
  try {
    return toPlain(signal, requestType(signal).fromObject(ids(parsed, '$') as Record<string, unknown>));
  } catch (e) {
    if (e instanceof MalformedOtlp) throw e;
    throw new MalformedOtlp(`the body is not an OTLP ${NAMES[signal]} (JSON): ${(e as Error).message}`);
  }
};

export const decodeProtobuf = (body: Uint8Array): OtlpRequest => decodeBinary('traces', body) as OtlpRequest;
/** The protobuf trace request through `toObject` and the walk (`toPlain`): what `decodeProtobuf` must equal (tests). */
export const decodeProtobufViaToObject = (body: Uint8Array): OtlpRequest =>
  toPlain('traces', requestType('traces').decode(body)) as OtlpRequest;
export const decodeJson = (text: string): OtlpRequest => decodeText('traces', text) as OtlpRequest;
export const decodeLogsProtobuf = (body: Uint8Array): OtlpLogsRequest => decodeBinary('logs', body) as OtlpLogsRequest;
export const decodeLogsJson = (text: string): OtlpLogsRequest => decodeText('logs', text) as OtlpLogsRequest;

/**
 * An Export{Trace,Logs}ServiceResponse: empty on full success, else partial_success with the rejected count (spans or
 * log records) and why.
 */
export const encodeResponse = (
  format: 'protobuf' | 'json',
  rejected: { spans: number; message: string },
  signal: Signal = 'traces',
): Uint8Array | string => {
  const count = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  const body =
    rejected.spans > 0 || rejected.message
      ? { partialSuccess: { [count]: String(rejected.spans), errorMessage: rejected.message } }
      : {};
  if (format === 'json') return JSON.stringify(body);
  const response = signal === 'traces' ? load().response : load().logsResponse;
  return response.encode(response.fromObject(body)).finish();
};

/** A google.rpc.Status, the OTLP error body. */
export const encodeStatus = (format: 'protobuf' | 'json', code: number, message: string): Uint8Array | string => {
  if (format === 'json') return JSON.stringify({ code, message });
  const { status } = load();
  return status.encode(status.fromObject({ code, message })).finish();
};

/** Decodes an Export{Trace,Logs}ServiceResponse (for tests and clients). */
export const decodeResponse = (body: Uint8Array, signal: Signal = 'traces'): Record<string, unknown> => {
  const response = signal === 'traces' ? load().response : load().logsResponse;
  return response.toObject(response.decode(body), { longs: Number, defaults: false });
};

/** Encodes an ExportTraceServiceRequest (OTLP JSON shape, hex ids) as protobuf (for benches, tests and clients). */
export const encodeTraceRequest = (request: unknown): Uint8Array => {
  const { request: type } = load();
  const ids = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(ids);
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        ID_FIELDS.has(k) && typeof v === 'string' ? Buffer.from(v, 'hex') : ids(v),
      ]),
    );
  };
  return type.encode(type.fromObject(ids(request) as Record<string, unknown>)).finish();
};

/** Decodes a google.rpc.Status error body (for tests and clients). */
export const decodeStatus = (body: Uint8Array): { code?: number; message?: string } =>
  load().status.toObject(load().status.decode(body), { defaults: false });
