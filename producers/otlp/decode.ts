/**
 * OTLP/HTTP trace export bodies, decoded with protobufjs from the protocol's own `.proto` files (`proto/`, from
 * the OpenTelemetry project's published artifact): `application/x-protobuf` through the binary decoder, and
 * `application/json` (the OTLP JSON mapping: lowerCamelCase names, hex trace and span ids) through the same
 * message types' `fromObject`, so both encodings come out as the same plain object.
 */
import { fileURLToPath } from 'node:url';
import { isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';

const PROTO_DIR = fileURLToPath(new URL('./proto/', import.meta.url));

let types: { request: protobuf.Type; response: protobuf.Type; status: protobuf.Type } | undefined;
const load = () => {
  if (types) return types;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(PROTO_DIR, target));
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  // google.rpc.Status, the body of an OTLP error answer (its two scalar fields; `details` is left empty).
  const status = new protobuf.Type('Status')
    .add(new protobuf.Field('code', 1, 'int32'))
    .add(new protobuf.Field('message', 2, 'string'));
  new protobuf.Root().define('google.rpc').add(status);
  types = {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
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

/** The body could not be read as an ExportTraceServiceRequest. */
export class MalformedOtlp extends Error {
  override name = 'MalformedOtlp';
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Binary ids to hex, every other field as protobufjs gives it (int64 as decimal strings). */
const toPlain = (message: protobuf.Message): OtlpRequest => {
  const obj = load().request.toObject(message, { longs: String, enums: Number, bytes: Array, defaults: false });
  const hex = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hex);
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (ID_FIELDS.has(k) && Array.isArray(v)) out[k] = Buffer.from(v as number[]).toString('hex');
      else if (k === 'bytesValue' && Array.isArray(v)) out[k] = Buffer.from(v as number[]).toString('base64');
      else out[k] = hex(v);
    }
    return out;
  };
  return hex(obj) as OtlpRequest;
};

export const decodeProtobuf = (body: Uint8Array): OtlpRequest => {
  try {
    return toPlain(load().request.decode(body));
  } catch (e) {
    throw new MalformedOtlp(`the body is not an OTLP ExportTraceServiceRequest (protobuf): ${(e as Error).message}`);
  }
};

/** OTLP/JSON: ids are hex strings (the JSON mapping's one difference from protobuf's JSON), the rest as proto3 JSON. */
export const decodeJson = (text: string): OtlpRequest => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new MalformedOtlp(`the body is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new MalformedOtlp('the body is not an OTLP ExportTraceServiceRequest (JSON): expected an object');
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
    return toPlain(load().request.fromObject(ids(parsed, '$') as Record<string, unknown>));
  } catch (e) {
    if (e instanceof MalformedOtlp) throw e;
    throw new MalformedOtlp(`the body is not an OTLP ExportTraceServiceRequest (JSON): ${(e as Error).message}`);
  }
};

/** An ExportTraceServiceResponse: empty on full success, else partial_success with the rejected count and why. */
export const encodeResponse = (
  format: 'protobuf' | 'json',
  rejected: { spans: number; message: string },
): Uint8Array | string => {
  const body =
    rejected.spans > 0 || rejected.message
      ? { partialSuccess: { rejectedSpans: String(rejected.spans), errorMessage: rejected.message } }
      : {};
  if (format === 'json') return JSON.stringify(body);
  const { response } = load();
  return response.encode(response.fromObject(body)).finish();
};

/** A google.rpc.Status, the OTLP error body. */
export const encodeStatus = (format: 'protobuf' | 'json', code: number, message: string): Uint8Array | string => {
  if (format === 'json') return JSON.stringify({ code, message });
  const { status } = load();
  return status.encode(status.fromObject({ code, message })).finish();
};

/** Decodes an ExportTraceServiceResponse (for tests and clients). */
export const decodeResponse = (body: Uint8Array): Record<string, unknown> =>
  load().response.toObject(load().response.decode(body), { longs: Number, defaults: false });

/** Decodes a google.rpc.Status error body (for tests and clients). */
export const decodeStatus = (body: Uint8Array): { code?: number; message?: string } =>
  load().status.toObject(load().status.decode(body), { defaults: false });
