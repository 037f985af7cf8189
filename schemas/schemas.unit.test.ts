import { describe, expect, it } from 'vitest';
import { jsonCodec, validateEvent } from './codec.ts';
import { InvalidEvent } from './errors.ts';
import { EVENT_SCHEMAS, EVENT_TYPES, type TrialRecorded } from './events/index.ts';
import { deterministicEventId, eventIdTime, EVENT_ID_PATTERN, newEventId } from './ids.ts';
import { jsonSchemaOf, subjectOf } from './jsonSchema.ts';
import { keyOf, TOPICS, topicOf } from './topics.ts';

const trial = (over: Partial<TrialRecorded> = {}): TrialRecorded => ({
  event_id: deterministicEventId(1_764_000_000_000, 'run', 'r1', 0),
  type: 'TrialRecorded',
  schema_version: 1,
  occurred_at: 1_764_000_000_000,
  producer: 'test',
  suite: 'refunds',
  dataset_version: 'v1',
  row_id: 'r1',
  run_id: 'run',
  attempt: 0,
  agent: { version: 'a1' },
  passed: true,
  ...over,
});

describe('event ids', () => {
  it('are ULIDs whose time part is the event time', () => {
    const id = newEventId(1_764_000_000_123);
    expect(id).toMatch(EVENT_ID_PATTERN);
    expect(eventIdTime(id)).toBe(1_764_000_000_123);
  });
  it('are deterministic from the trial identity, and differ between attempts', () => {
    expect(deterministicEventId(5, 'run', 'r1', 0)).toBe(deterministicEventId(5, 'run', 'r1', 0));
    expect(deterministicEventId(5, 'run', 'r1', 0)).not.toBe(deterministicEventId(5, 'run', 'r1', 1));
  });
  it('sort by time as plain strings', () => {
    const ids = [3, 1, 2].map((t) => deterministicEventId(t * 1000, t));
    expect([...ids].sort().map(eventIdTime)).toEqual([1000, 2000, 3000]);
  });
});

describe('JSON Schema generation', () => {
  it.each(EVENT_TYPES)('%s has an object schema that requires the envelope', (type) => {
    const schema = jsonSchemaOf(type) as { type: string; required: string[]; title: string };
    expect(schema.type).toBe('object');
    expect(schema.title).toBe(type);
    expect(schema.required).toEqual(
      expect.arrayContaining(['event_id', 'type', 'schema_version', 'occurred_at', 'producer']),
    );
  });
  it('gives each event its own subject on its topic', () => {
    expect(subjectOf('TrialRecorded')).toBe('passk.trials-TrialRecorded');
    expect(new Set(EVENT_TYPES.map(subjectOf)).size).toBe(Object.keys(EVENT_SCHEMAS).length);
  });
});

describe('json codec', () => {
  it('round-trips a valid event', async () => {
    const e = trial({ checks: [{ name: 'return_window', answer: true }], tags: ['must_not_break'] });
    expect(await jsonCodec.decode(await jsonCodec.encode(e))).toEqual(e);
  });
  it('refuses bytes that are not UTF-8 JSON, with a reason', async () => {
    await expect(jsonCodec.decode(new Uint8Array([0xff, 0xfe, 0x00]))).rejects.toThrow(InvalidEvent);
    await expect(jsonCodec.decode(new TextEncoder().encode('{"event_id":'))).rejects.toThrow(/undecodable/);
  });
  it('names the failing field of an invalid event', () => {
    expect(() => validateEvent({ ...trial(), attempt: -1 })).toThrow(/attempt/);
    expect(() => validateEvent({ ...trial(), type: 'Nope' })).toThrow(InvalidEvent);
  });
  it('refuses to encode an invalid event', async () => {
    await expect(jsonCodec.encode({ ...trial(), row_id: '' })).rejects.toThrow(/row_id/);
  });
});

describe('topics and keys', () => {
  it('puts every attempt of a row under one key, so its attempts stay in order', () => {
    expect(keyOf(trial({ attempt: 0 }))).toBe(keyOf(trial({ attempt: 5, run_id: 'other' })));
    expect(keyOf(trial({ row_id: 'r2' }))).not.toBe(keyOf(trial()));
    expect(topicOf(trial())).toBe(TOPICS.trials);
  });
});

describe('event ids', () => {
  it('encode their time and give it back; a string that is not a ULID is refused', () => {
    for (const t of [0, 1, 1_700_000_000_000, 2 ** 48 - 1]) {
      expect(eventIdTime(newEventId(t))).toBe(t);
      expect(eventIdTime(deterministicEventId(t, 'a', 1))).toBe(t);
      expect(newEventId(t)).toMatch(EVENT_ID_PATTERN);
    }
    expect(deterministicEventId(5, 'a', 1)).toBe(deterministicEventId(5, 'a', 1));
    expect(newEventId(5)).not.toBe(newEventId(5));
    expect(eventIdTime('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBe(1469922850259); // the ULID spec's example, as the ulid package decodes it
    expect(() => eventIdTime('8ZZZZZZZZZ0000000000000000')).toThrow(/too large/);
    expect(() => eventIdTime('01ARZ3NDEKTSV4RRFFQ69G5FAU'.replace('A', 'U'))).toThrow(/invalid character/);
    expect(() => eventIdTime('short')).toThrow(/26 characters/);
  });

  it('are the ones stored before: a deterministic id never changes for the same parts', () => {
    // computed by the first implementation (createHash, BigInt base32): a re-sent trace must get the id it had
    expect(deterministicEventId(1767225600000, 'TraceSampled', '0af7651916cd43dd8448eb211c80319c', 1, 'c0ffee')).toBe(
      '01KDVDNA00AAATE24X5NF4ZRCS',
    );
    expect(deterministicEventId(0, 'TraceSampled', 'trace-1')).toBe('0000000000NXXHSKWPVPFAD33Q');
  });
});
