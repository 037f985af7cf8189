import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syntheticTrials } from '../../bench/processors.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { anyBytes, base, deep } from '../helpers/poison.ts';
import { fastJsonCodec } from '../../log/fastValidate.ts';

const outcome = async (decode: () => Promise<unknown>): Promise<{ ok: unknown } | { reason: string }> => {
  try {
    return { ok: await decode() };
  } catch (e) {
    if (!(e instanceof InvalidEvent)) throw e;
    return { reason: e.reason };
  }
};

const changelogV1 = {
  event_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
  type: 'RowStateChanged',
  schema_version: 1,
  occurred_at: 1_700_000_000_000,
  producer: 'old',
  suite: 's',
  dataset_version: 'd',
  agent_version: 'v',
  row_id: 'r',
  seq: 1,
  n: 1,
  c: 1,
  ungraded: 0,
  class: 'unclassified',
  attempts: [
    { attempt: 0, run_id: 'run-1', event_id: '01JAAAAAAAAAAAAAAAAAAAAAAB', passed: true, checks: { a: true } },
  ],
};

/** The fast path validates once (compiled closed schemas); it must accept and refuse exactly what zod does. */
describe('fastJsonCodec', () => {
  it('decodes whatever bytes exactly as the zod codec: the same event, or the same reason', async () => {
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(anyBytes, async (bytes) => {
        const fast = await outcome(() => fastJsonCodec.decode(bytes));
        expect(fast).toEqual(await outcome(() => jsonCodec.decode(bytes)));
        expect(await outcome(async () => fastJsonCodec.decodeNow!(bytes))).toEqual(fast); // no await, the same
        if ('ok' in fast) valid++;
      }),
      { numRuns: 400 },
    );
    expect(valid).toBeGreaterThan(0);
  }, 30_000);

  it('agrees on valid trials, unknown fields (stripped by the slow path) and escapes', async () => {
    const cases = [
      ...[...syntheticTrials({ events: 50, rows: 5, versions: 2 })].map((t) => JSON.stringify(t)),
      JSON.stringify({ ...base, x_new_optional_field: 1 }),
      JSON.stringify({ ...base, row_id: 'caf\u00e9 \\u0041' }),
      JSON.stringify({ ...base, row_id: 'a\ud800b' }),
      JSON.stringify({ ...base, actions: [{ tool: 't', arguments: { a: deep(40) } }] }),
      JSON.stringify({ ...base, actions: [{ tool: 't', arguments: { a: deep(70) } }] }),
      JSON.stringify({ ...base, type: '__proto__' }),
      // a changelog record of schema version 1 (attempts, no attempt_records) is upgraded on decode, by both
      JSON.stringify(changelogV1),
      JSON.stringify({ ...changelogV1, schema_version: 2, attempt_records: [], attempts: undefined }),
    ];
    for (const text of cases) {
      const bytes = new TextEncoder().encode(text);
      expect(await outcome(() => fastJsonCodec.decode(bytes))).toEqual(await outcome(() => jsonCodec.decode(bytes)));
    }
    const upgraded = (await fastJsonCodec.decode(new TextEncoder().encode(JSON.stringify(changelogV1)))) as {
      attempt_records?: { checks: unknown }[];
      attempts?: unknown;
    };
    expect(upgraded.attempts).toBeUndefined();
    expect(upgraded.attempt_records?.[0]?.checks).toEqual([{ name: 'a', answer: true }]);
  });

  it('decodes text as it decodes the bytes; trusted, it takes only a changelog record in the shape passk writes unchecked', async () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    const textOf = (b: Uint8Array): string | undefined => {
      try {
        return fatal.decode(b);
      } catch {
        return undefined; // not UTF-8: the log decodes such a record from its bytes (embeddedTextRead.int)
      }
    };
    await fc.assert(
      fc.asyncProperty(anyBytes, async (bytes) => {
        const text = textOf(bytes);
        if (text === undefined) return;
        const fast = await outcome(() => fastJsonCodec.decode(bytes));
        expect(await outcome(async () => fastJsonCodec.decodeTextNow!(text))).toEqual(fast);
        // no trial, nor any record that is not a changelog record in passk's shape, is taken unchecked
        expect(await outcome(async () => fastJsonCodec.decodeTextNow!(text, { trusted: true }))).toEqual(fast);
      }),
      { numRuns: 300 },
    );
    // a changelog record of schema version 1 is upgraded, trusted or not; one of version 2 comes as written
    for (const record of [
      changelogV1,
      { ...changelogV1, schema_version: 2, attempt_records: [], attempts: undefined },
    ]) {
      const text = JSON.stringify(record);
      expect(fastJsonCodec.decodeTextNow!(text, { trusted: true })).toEqual(
        await jsonCodec.decode(new TextEncoder().encode(text)),
      );
    }
  });
});
