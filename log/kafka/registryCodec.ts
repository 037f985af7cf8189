// the library's constants and errors by their own modules: its index loads avsc, protobufjs and ajv 7 (registryClient.ts)
import { SchemaType } from '@kafkajs/confluent-schema-registry/dist/@types.js';
import { COMPATIBILITY } from '@kafkajs/confluent-schema-registry/dist/constants.js';
import { ConfluentSchemaRegistryCompatibilityError } from '@kafkajs/confluent-schema-registry/dist/errors.js';
import type { EventCodec } from '../../schemas/codec.ts';
import { validateEvent } from '../../schemas/codec.ts';
import { BackendUnavailable, InvalidEvent } from '../../schemas/errors.ts';
import { EVENT_TYPES, type EventType, type PasskEvent } from '../../schemas/events/index.ts';
import { jsonSchemaOf, subjectOf } from '../../schemas/jsonSchema.ts';
import { SchemaRejected } from '../errors.ts';
import { closeContentModel, validateDecoded } from '../fastValidate.ts';
import type { RegistryClient } from './registryClient.ts';

/** The part of a registered schema the codec uses (the library's JSON Schema helper, backed by ajv). */
interface RegisteredJsonSchema {
  isValid(payload: object, opts?: { errorHook: (path: string[], message: unknown) => void }): boolean;
}

export interface RegistryCodec extends EventCodec {
  /** Schema id each event type is written with. */
  readonly ids: ReadonlyMap<EventType, number>;
  decodeNow(bytes: Uint8Array): PasskEvent | undefined;
}

/**
 * The schema registered for an event type: `jsonSchemaOf(type)` with a closed content model
 * (`additionalProperties: false` on every object that lists its properties). The registry's JSON
 * Schema rules make adding an optional property BACKWARD-compatible only for a closed model (on an
 * open one Apicurio reports "property schemas narrowed"), so evolution by new optional fields needs it.
 * Writers never send unknown fields (zod strips them), so nothing valid is refused.
 */
export const registeredSchemaOf = (type: EventType): Record<string, unknown> =>
  closeContentModel(jsonSchemaOf(type)) as Record<string, unknown>;

const MAGIC = 0;
const utf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * Registers a JSON Schema under a subject with BACKWARD compatibility (idempotent: the same schema
 * gets the same id). @throws SchemaRejected when the registry refuses it; BackendUnavailable when it does not answer.
 */
export const registerJsonSchema = async (deps: {
  registry: RegistryClient;
  subject: string;
  schema: object;
}): Promise<number> => {
  try {
    const { id } = await deps.registry.register(
      { type: SchemaType.JSON, schema: JSON.stringify(deps.schema) },
      { subject: deps.subject, compatibility: COMPATIBILITY.BACKWARD },
    );
    return id;
  } catch (e) {
    const status = statusOf(e);
    if (status === 409 || status === 422 || e instanceof ConfluentSchemaRegistryCompatibilityError)
      throw new SchemaRejected(deps.subject, (e as Error).message, e);
    throw new BackendUnavailable(`schema registry: registering ${deps.subject}: ${(e as Error).message}`, e);
  }
};

const statusOf = (e: unknown): number | undefined =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : undefined;

/**
 * Registers every event's JSON Schema (BACKWARD compatibility) and encodes in the Confluent wire
 * format: magic byte 0, the 4-byte schema id, then UTF-8 JSON. Encoding validates once (zod; the
 * registered schema is generated from it, so zod's output needs no second check), and not at all
 * for `trusted` events (built by the processors). Decoding checks the frame and the schema id, then
 * validates once (`validateDecoded`: our compiled closed schema); a record it refuses is checked
 * against the writer's registered schema and then zod, as before, for its reason. Every refusal is an `InvalidEvent` whose
 * reason starts with `not wire format`, `unknown schema id`, `json` or `schema`. A registry that
 * does not answer is `BackendUnavailable` (retriable), never a dead letter.
 */
export const createRegistryCodec = async (deps: {
  registry: RegistryClient;
  /** Prepended to every subject (tests; several passk installs on one registry). @default '' */
  subjectPrefix?: string;
}): Promise<RegistryCodec> => {
  const { registry } = deps;
  const ids = new Map<EventType, number>();
  for (const type of EVENT_TYPES) {
    const subject = `${deps.subjectPrefix ?? ''}${subjectOf(type)}`;
    ids.set(type, await registerJsonSchema({ registry, subject, schema: registeredSchemaOf(type) }));
  }

  const fetchSchema = async (id: number): Promise<RegisteredJsonSchema> => {
    try {
      return await registry.getSchema(id);
    } catch (e) {
      if (statusOf(e) === 404) throw new InvalidEvent(`unknown schema id ${id}`, e);
      throw new BackendUnavailable(`schema registry: reading schema ${id}: ${(e as Error).message}`, e);
    }
  };
  // a schema id names immutable content: once read, it is kept (a failed read is not, so it is retried)
  const known = new Map<number, RegisteredJsonSchema>();
  const schemaOf = async (id: number): Promise<RegisteredJsonSchema> => {
    const have = known.get(id);
    if (have) return have;
    const schema = await fetchSchema(id);
    known.set(id, schema);
    return schema;
  };

  const checkAgainst = (schema: RegisteredJsonSchema, id: number, payload: unknown) => {
    const problems: string[] = [];
    const ok = schema.isValid(payload as object, {
      errorHook: (path, message) => problems.push(`${path.join('.') || '(root)'}: ${String(message)}`),
    });
    if (!ok)
      throw new InvalidEvent(`schema: not valid against registered schema ${id}: ${problems.slice(0, 5).join('; ')}`);
  };

  /** The schema id of a record in the wire format. @throws InvalidEvent when it is not in the wire format. */
  const idOf = (bytes: Uint8Array): number => {
    if (bytes.byteLength < 6 || bytes[0] !== MAGIC)
      throw new InvalidEvent(
        `not wire format: expected magic byte 0 and a 4-byte schema id, got ${bytes.byteLength} bytes starting ${bytes[0] ?? 'nothing'}`,
      );
    return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(1);
  };
  const decodeWith = (schema: RegisteredJsonSchema, id: number, bytes: Uint8Array): PasskEvent => {
    let payload: unknown;
    let text: string;
    try {
      text = utf8.decode(bytes.subarray(5));
      payload = JSON.parse(text);
    } catch (e) {
      throw new InvalidEvent(`json: ${(e as Error).message}`, e);
    }
    if (typeof payload !== 'object' || payload === null)
      throw new InvalidEvent('schema: the payload is not a JSON object');
    return validateDecoded(payload, text, (value) => {
      checkAgainst(schema, id, value);
      return validateEvent(value);
    });
  };

  return {
    ids,
    encode: async (event, opts) => {
      const valid = opts?.trusted ? event : validateEvent(event);
      const id = ids.get(valid.type)!;
      const json = JSON.stringify(valid);
      const out = Buffer.allocUnsafe(5 + Buffer.byteLength(json));
      out[0] = MAGIC;
      out.writeInt32BE(id, 1);
      out.write(json, 5);
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    },
    decode: async (bytes) => {
      const id = idOf(bytes);
      return decodeWith(await schemaOf(id), id, bytes);
    },
    // a schema already read: no await (the usual case, every record after a type's first)
    decodeNow: (bytes) => {
      const id = idOf(bytes);
      const schema = known.get(id);
      return schema && decodeWith(schema, id, bytes);
    },
  };
};
