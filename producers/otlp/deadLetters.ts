/**
 * The dead letters of the OTLP receiver: each span or log record it refuses or evicts, as a one-item OTLP/JSON export
 * request (so it can be read, or fixed and sent again), redacted as a stored trace is (ingest never stores what it
 * would redact elsewhere), clipped before redaction. Its identity hangs on the ingest path, the reason's kind and
 * the letter's bytes: a re-sent request that is refused again makes the same letter, which the log appends once.
 */
import { createHash } from 'node:crypto';
import type { DeadLetter } from '../../processors/ports.ts';
import { clipText, redactText, redactValue } from '../redaction/redact.ts';
import type { Redactor } from '../redaction/text.ts';
import type { Refused } from './genai.ts';

/** Characters of one string kept in a letter (more are clipped, with how many more there were). */
export const LETTER_MAX_CHARS = 2_000;
/** Characters of all of a letter's strings together; past it, strings keep only the note of their length. */
export const LETTER_BUDGET_CHARS = 16_000;
/** Bytes of a letter's value at most (its JSON is cut there, and the reason says so). */
export const LETTER_MAX_BYTES = 64 * 1024;

/** The ingest path a letter came through: its source topic (`otlp:/v1/traces`, `otlp:/v1/logs`). */
export const ingestTopic = (path: '/v1/traces' | '/v1/logs'): string => `otlp:${path}`;

/** The request that carried `item` alone, in the OTLP JSON mapping. */
const requestOf = (item: Refused): unknown => {
  const resource = item.resource ? { resource: { attributes: item.resource } } : {};
  return 'span' in item
    ? { resourceSpans: [{ ...resource, scopeSpans: [{ spans: [item.span] }] }] }
    : { resourceLogs: [{ ...resource, scopeLogs: [{ logRecords: [item.logRecord] }] }] };
};

/** Whether redactValue clipped something: its note of how many more characters there were. */
const CLIPPED = /(?:…|\.\.\.)\[\d+ more characters\]/;

/** One dead letter per refused item: `kind` is the counted reason (`no_convention`, `evicted`, …). */
export const ingestLetters = (
  items: readonly Refused[],
  kind: string,
  message: string,
  redactors: readonly Redactor[],
): DeadLetter[] => {
  const reason = `${kind}: ${redactText(clipText(message, LETTER_MAX_CHARS), redactors)}`;
  return items.map((item) => {
    const redacted = redactValue(requestOf(item), redactors, {
      maxChars: LETTER_MAX_CHARS,
      budget: LETTER_BUDGET_CHARS,
    });
    const text = JSON.stringify(redacted);
    let bytes = Buffer.from(text);
    let note = CLIPPED.test(text) ? ' (letter clipped: strings over 2,000 characters, or past 16,000 in all)' : '';
    if (bytes.length > LETTER_MAX_BYTES) {
      note = ` (letter clipped to ${LETTER_MAX_BYTES} of ${bytes.length} bytes)`;
      bytes = bytes.subarray(0, LETTER_MAX_BYTES);
    }
    const path = 'span' in item ? '/v1/traces' : '/v1/logs';
    const traceId = 'span' in item ? item.span.traceId : (item.logRecord.traceId ?? '');
    const spanId = 'span' in item ? item.span.spanId : (item.logRecord.spanId ?? '');
    const id = createHash('sha256').update(`${path}\u001f${kind}\u001f`).update(bytes).digest('base64url').slice(0, 32);
    return {
      source: {
        topic: ingestTopic(path),
        partition: -1,
        offset: -1,
        key: redactText(`${traceId}/${spanId}`.slice(0, 200), redactors),
      },
      value: new Uint8Array(bytes),
      reason: reason + note,
      id: `${ingestTopic(path)}/${id}`,
    };
  });
};
