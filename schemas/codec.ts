import { InvalidEvent } from './errors.ts';
import { PasskEvent } from './events/index.ts';
import { MAX_NESTING, textProblem } from './wellFormed.ts';

/** Turns events into bytes and back. Decoding validates: core code only ever sees typed events. */
export interface EventCodec {
  /**
   * Validates (zod: strips unknown fields, schema key order) and serializes. `trusted`: the event was
   * built by passk's own folds from validated state (a changelog record, a decision), so it is
   * serialized as built, not validated again (its shape is checked by the processors' tests).
   */
  encode(event: PasskEvent, opts?: EncodeOptions): Promise<Uint8Array>;
  /** @throws InvalidEvent when the bytes are not a valid event (the caller dead-letters them). */
  decode(bytes: Uint8Array): Promise<PasskEvent>;
  /**
   * `decode` without a promise, when it needs no I/O: the event, or undefined when only `decode` can
   * (a schema not read yet). A consumer decodes a batch record by record, and an await per record was a
   * third of the fast path's time. @throws InvalidEvent as `decode` does.
   */
  decodeNow?(bytes: Uint8Array): PasskEvent | undefined;
  /**
   * `decodeNow` of the bytes' text, read as text by the log (the embedded log's SQLite hands a value over as a
   * string without a buffer per record). The caller vouches that `text` is what a fatal UTF-8 decoder makes of
   * the bytes (no U+FFFD from a bad sequence, no byte order mark it would have dropped). @throws InvalidEvent
   */
  decodeTextNow?(text: string, opts?: DecodeOptions): PasskEvent;
}

export interface DecodeOptions {
  /**
   * The record is one passk wrote itself, as it wrote it (its changelog, read back at a restore: the trial
   * topology publishes it `trusted`): a RowStateChanged in the shape passk writes is taken as parsed, without the
   * schema's check. Any other record, or one in another shape (an older schema version, a field the restore reads
   * missing or of another type), is checked as always, and refused as always (the consumer dead-letters it).
   */
  readonly trusted?: boolean;
}

export interface EncodeOptions {
  readonly trusted?: boolean;
}

const describeIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string =>
  issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
    .join('; ');

/**
 * Validates a parsed value as an event; the reason names the failing fields. Text that is not valid
 * Unicode (a lone UTF-16 surrogate) and nesting deeper than `MAX_NESTING` are refused too: no store or
 * reader downstream could keep them.
 */
export const validateEvent = (value: unknown): PasskEvent => {
  const bad = textProblem(value, MAX_NESTING);
  if (bad)
    throw new InvalidEvent(
      bad.problem === 'too deep'
        ? `schema: ${bad.path}: nested deeper than ${MAX_NESTING} levels`
        : `schema: ${bad.path}: holds a lone UTF-16 surrogate (not valid Unicode)`,
    );
  const result = PasskEvent.safeParse(value);
  if (!result.success) throw new InvalidEvent(`schema: ${describeIssues(result.error.issues)}`, result.error);
  return result.data;
};

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** Plain UTF-8 JSON, validated by the zod schemas (the log adapters decode with a faster validator, log/fastValidate.ts). */
export const jsonCodec: EventCodec = {
  encode: async (event, opts) => encoder.encode(JSON.stringify(opts?.trusted ? event : validateEvent(event))),
  decode: async (bytes) => {
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(bytes));
    } catch (e) {
      throw new InvalidEvent(`undecodable: ${(e as Error).message}`, e);
    }
    return validateEvent(value);
  },
};
