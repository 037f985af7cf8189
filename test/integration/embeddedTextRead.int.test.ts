import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecords } from '../../log/deadLetters.ts';
import { fastJsonCodec } from '../../log/fastValidate.ts';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { EventLog } from '../../processors/ports.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { anyBytes, base } from '../helpers/poison.ts';

const utf8 = new TextEncoder();
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** What the embedded consumer hands over of a topic's records: the events, and the letters it dead-lettered. */
const consume = async (log: EventLog, count: number, groupId: string) => {
  const letters: { offset: number; value: string; reason: string }[] = [];
  const events: { offset: number; event: unknown }[] = [];
  const consumer = await log.consumer({
    groupId,
    topics: [TOPICS.trials],
    onDeadLetters: async (dead) => {
      for (const d of dead) letters.push({ offset: d.source.offset, value: hex(d.value), reason: d.reason });
    },
  });
  for await (const batch of consumer.batches()) {
    for (const e of batch.events) events.push({ offset: e.offset, event: e.event });
    if (events.length + letters.length >= count) break;
  }
  await consumer.close();
  return { events, letters };
};

/** `values` written raw to a fresh embedded log's trials topic (one partition), then what `consume` hands over. */
const written = async (values: readonly Uint8Array[]) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-textread-'));
  const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL', partitions: 1 });
  try {
    await log.publisher.publishRaw(
      TOPICS.trials,
      values.map((value) => ({ key: 'k', value })),
    );
    return await consume(log, values.length, 'g');
  } finally {
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

/**
 * The embedded consumer reads a record's value as text (SQLite's UTF-8 to a string, no buffer per record) and
 * decodes that; the codec's own decoding is of the bytes, with a fatal UTF-8 decoder that drops a byte order mark.
 * Whatever the bytes, the consumer must hand over what decoding the bytes gives: the same event, or the same
 * dead letter (its bytes as stored, its reason).
 */
describe('the embedded consumer reading values as text', () => {
  const edges = [
    utf8.encode(JSON.stringify(base)),
    new Uint8Array([0xef, 0xbb, 0xbf, ...utf8.encode(JSON.stringify(base))]), // a BOM the decoder drops: valid
    utf8.encode(JSON.stringify({ ...base, row_id: 'r\ufffd' })), // U+FFFD in the text itself: valid
    (() => {
      const b = utf8.encode(JSON.stringify({ ...base, row_id: 'rX' }));
      b[b.indexOf(0x58)] = 0xff; // not UTF-8 (V8 would make it U+FFFD): refused
      return b;
    })(),
    new Uint8Array([0xef, 0xbb, 0xbf]),
    new Uint8Array(0),
  ];

  it('hands over what decoding the bytes gives, event for event and letter for letter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(anyBytes, fc.constantFrom(...edges)), { minLength: 1, maxLength: 20 }),
        async (values) => {
          const got = await written(values);
          const expected = await decodeRecords(
            fastJsonCodec,
            values.map((value, offset) => ({
              topic: TOPICS.trials,
              partition: 0,
              offset,
              key: 'k',
              value,
              timestamp: 0,
            })),
          );
          expect(got.events).toEqual(expected.events.map((e) => ({ offset: e.offset, event: e.event })));
          expect(got.letters).toEqual(
            expected.dead.map((d) => ({ offset: d.source.offset, value: hex(d.value), reason: d.reason })),
          );
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);

  it('the edge cases on their own: a BOM and a U+FFFD of the text are valid, a byte that is not UTF-8 is refused', async () => {
    const got = await written(edges);
    expect(got.events.map((e) => e.offset)).toEqual([0, 1, 2]);
    expect(got.letters.map((l) => [l.offset, l.value])).toEqual([3, 4, 5].map((i) => [i, hex(edges[i]!)]));
  });
});
