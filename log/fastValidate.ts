import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';
import { jsonCodec, validateEvent, type EventCodec } from '../schemas/codec.ts';
import { InvalidEvent } from '../schemas/errors.ts';
import { EVENT_SCHEMAS, type EventType, type PasskEvent } from '../schemas/events/index.ts';
import { FAILURE_CATEGORIES } from '../schemas/events/trialRecorded.ts';
import { jsonSchemaOf } from '../schemas/jsonSchema.ts';
import { MAX_NESTING } from '../schemas/wellFormed.ts';

/**
 * The schemas with a closed content model (`additionalProperties: false` on every object that lists
 * its properties), as the registry holds them: a value the closed schema accepts is one zod accepts
 * and returns unchanged (nothing to strip), so it can be passed on as parsed.
 */
export const closeContentModel = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(closeContentModel);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = closeContentModel(v);
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
};

/**
 * Types whose zod schema reshapes some valid records (a transform), with the test of a record it keeps as it is:
 * only those may take the fast path. A RowStateChanged of schema version 1 carries `attempts`, which decoding turns
 * into `attempt_records` (schemas/events/decisions.ts).
 */
const RESHAPED: Partial<Record<string, (v: Record<string, unknown>) => boolean>> = {
  RowStateChanged: (v) => v.attempt_records !== undefined && v.attempts === undefined,
};

let ajv: AjvClass | undefined;
const compiled = new Map<string, ValidateFunction>();
/**
 * The validator of one event type, compiled the first time a record of that type is read: a process reads a few
 * of the types, and compiling all of them took about half a second of CPU at every start.
 */
const validatorOf = (type: string): ValidateFunction | undefined => {
  const done = compiled.get(type);
  if (done) return done;
  if (!Object.hasOwn(EVENT_SCHEMAS, type)) return undefined; // an unknown type: the slow path words the reason
  if (!ajv) {
    // ajv itself is loaded here too, not at start-up (about 40 ms of CPU): a command that opens the log but reads no
    // record (`passk check`, a `process` with nothing to read) never needs it. Its CommonJS entry, which is also
    // what `import 'ajv'` resolves to.
    const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass };
    // allowUnionTypes: the unions zod emits; strict off: zod's draft-7 output carries keywords ajv's strict mode
    // questions
    ajv = new Ajv({ allErrors: false, strict: false, allowUnionTypes: true });
  }
  const validate = ajv.compile(closeContentModel(jsonSchemaOf(type as EventType)) as object);
  compiled.set(type, validate);
  return validate;
};

/**
 * A `\u` escape of a UTF-16 surrogate (D800–DFFF, either case): the only way a lone one gets into the text. Other
 * escapes are not: the unit separator of passk's keys (`\u001f`, JSON.stringify escapes it) is in every gate book
 * snapshot, and sent each of them down the slow path (zod), about half of a restore's decode.
 */
const SURROGATE_ESCAPE = /\\u[dD][89abcdefABCDEF]/;

/**
 * Whether a parsed value's source text might hold what the JSON Schemas cannot see (schemas/wellFormed.ts):
 * a lone surrogate needs a `\u` escape of a surrogate (the UTF-8 decoders are fatal, so no raw one gets through),
 * and nesting deeper than MAX_NESTING needs at least that many `{` or `[` (then the parsed `value`'s depth is
 * asked: `tooDeep`).
 */
const mayHoldTextProblem = (text: string, value: unknown): boolean => {
  if (text.includes('\\u') && SURROGATE_ESCAPE.test(text)) return true;
  // every '{' and '[' counted (at least the depth), by the native indexOf: a record holds a few, and a loop
  // over each character was most of the fast path's time
  let open = 0;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1))
    if (++open >= MAX_NESTING) return tooDeep(value);
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1))
    if (++open >= MAX_NESTING) return tooDeep(value);
  return false;
};

/**
 * Whether a parsed value nests arrays and objects MAX_NESTING deep or more (`textProblem`'s "too deep", the depth
 * alone): asked only of a text with that many `{` and `[` in all, which a record with a few dozen entries reaches
 * (a gate book snapshot holding more than a few comparisons' ids) without being deep.
 */
const tooDeep = (root: unknown): boolean => {
  const stack: { v: object; depth: number }[] = [];
  if (typeof root === 'object' && root !== null) stack.push({ v: root, depth: 0 });
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (depth >= MAX_NESTING) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v))
      if (typeof x === 'object' && x !== null) stack.push({ v: x as object, depth: depth + 1 });
  }
  return false;
};

/**
 * Validates a decoded record once, on the hot path: one compiled ajv validator per event type (the
 * closed JSON Schema generated from the zod schema), about 3× zod's rate on a trial. A value it
 * accepts is returned as parsed. Anything else (an unknown type, a failing field, an unknown field a
 * newer writer added, a text problem) takes the slow path, `slow` (zod, with the codec's own checks),
 * which strips what it may strip and words the reason of what it refuses exactly as before.
 * @param text the JSON text `value` was parsed from
 */
export const validateDecoded = (
  value: unknown,
  text: string,
  slow: (value: unknown) => PasskEvent = validateEvent,
): PasskEvent => {
  if (typeof value === 'object' && value !== null && !mayHoldTextProblem(text, value)) {
    const type = (value as { type?: unknown }).type as string;
    const validate = typeof type === 'string' ? validatorOf(type) : undefined;
    if (validate?.(value) && (RESHAPED[type]?.(value as Record<string, unknown>) ?? true)) return value as PasskEvent;
  }
  return slow(value);
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The embedded log's codec: `jsonCodec`'s bytes and reasons, decoded with one validation per record
 * (`validateDecoded`) instead of zod's parse on every one.
 */
export const fastJsonCodec: EventCodec = {
  encode: jsonCodec.encode,
  decode: async (bytes) => decodeJson(bytes),
  decodeNow: (bytes) => decodeJson(bytes),
  decodeTextNow: (text, opts) => decodeText(text, opts?.trusted === true),
};

function decodeJson(bytes: Uint8Array): PasskEvent {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (e) {
    throw new InvalidEvent(`undecodable: ${(e as Error).message}`, e);
  }
  return decodeText(text, false);
}

const isCount = (x: unknown): boolean => typeof x === 'number' && Number.isInteger(x) && x >= 0;
const isStrings = (x: unknown): boolean => Array.isArray(x) && x.every((s) => typeof s === 'string');
const isAnswer = (x: unknown): boolean =>
  x === null || typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
const CATEGORIES: ReadonlySet<string> = new Set(FAILURE_CATEGORIES);
const isAmount = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x >= 0;
const isClass = (x: unknown): boolean =>
  x === 'stable_correct' || x === 'stable_wrong' || x === 'flip' || x === 'unclassified';
const isAttempt = (a: unknown): boolean => {
  if (typeof a !== 'object' || a === null) return false;
  const r = a as Record<string, unknown>;
  return (
    typeof r.event_id === 'string' &&
    typeof r.run_id === 'string' &&
    isCount(r.attempt) &&
    isCount(r.occurred_at) &&
    (r.passed === null || typeof r.passed === 'boolean') &&
    (r.output_hash === null || typeof r.output_hash === 'string') &&
    Array.isArray(r.checks) &&
    r.checks.every(
      (c: unknown) =>
        typeof c === 'object' &&
        c !== null &&
        typeof (c as { name?: unknown }).name === 'string' &&
        isAnswer((c as { answer?: unknown }).answer),
    ) &&
    isStrings(r.forbidden_actions) &&
    (r.failure_category === undefined || r.failure_category === null || CATEGORIES.has(r.failure_category as string)) &&
    (r.latency_ms === undefined || isAmount(r.latency_ms)) &&
    (r.cost_usd === undefined || isAmount(r.cost_usd))
  );
};

/**
 * A RowStateChanged as passk writes it (schema version 2), which a trusted read takes as parsed: its type, and every
 * field the restore reads of it (processors/folds/rowState.ts `fromRowStateChanged`, the row store's keys and seq) of
 * the type it reads, by a plain check (no schema, no walk of unknown keys). Anything else, a malformed record of
 * passk's changelog too, is validated in full, and a refused one dead-lettered: a record the restore could not
 * convert would fail it at every start.
 */
const ownRowState = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    v.type === 'RowStateChanged' &&
    v.attempts === undefined &&
    typeof v.suite === 'string' &&
    typeof v.dataset_version === 'string' &&
    typeof v.agent_version === 'string' &&
    typeof v.row_id === 'string' &&
    isCount(v.seq) &&
    isCount(v.occurred_at) &&
    isCount(v.n) &&
    isCount(v.c) &&
    isCount(v.ungraded) &&
    isClass(v.class) &&
    Array.isArray(v.attempt_records) &&
    v.attempt_records.every(isAttempt) &&
    (v.tags === undefined || isStrings(v.tags)) &&
    (v.retracted_runs === undefined || isStrings(v.retracted_runs))
  );
};

function decodeText(text: string, trusted: boolean): PasskEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new InvalidEvent(`undecodable: ${(e as Error).message}`, e);
  }
  return trusted && ownRowState(value) ? (value as PasskEvent) : validateDecoded(value, text);
}
