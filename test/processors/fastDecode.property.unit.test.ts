import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syntheticTrials } from '../../bench/processors.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { anyBytes, base, deep } from '../helpers/poison.ts';
import { fastJsonCodec } from '../../log/fastValidate.ts';
import { fromRowStateChanged } from '../../processors/folds/rowState.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';

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
  });

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
  it('trusted, it checks what the restore reads of a changelog record: a malformed one is validated in full', async () => {
    const record = {
      ...changelogV1,
      schema_version: 2,
      attempts: undefined,
      seq: 3,
      n: 2,
      c: 1,
      class: 'flip',
      attempt_records: [
        {
          event_id: '01JAAAAAAAAAAAAAAAAAAAAAAB',
          run_id: 'run-1',
          attempt: 0,
          occurred_at: 1_700_000_000_000,
          passed: true,
          output_hash: 'h',
          checks: [{ name: 'a', answer: true }],
          forbidden_actions: ['rm'],
        },
      ],
      tags: ['t'],
      retracted_runs: ['run-0'],
    };
    // the reviewer's record: a seq that is not a number, an attempt record that is null (the restore threw a TypeError)
    const reviewed = JSON.stringify({ ...record, seq: '7', n: -1, class: 'bogus', attempt_records: [null] });
    const refused = await outcome(async () => fastJsonCodec.decodeTextNow!(reviewed));
    expect(refused).toHaveProperty('reason');
    expect(await outcome(async () => fastJsonCodec.decodeTextNow!(reviewed, { trusted: true }))).toEqual(refused);

    // any field the restore reads (top level or of an attempt) replaced by any JSON value: a trusted read takes the
    // record only where the restore can convert it; what it refuses, it refuses as the untrusted read does
    const paths = [
      ...['suite', 'dataset_version', 'agent_version', 'row_id', 'seq', 'occurred_at', 'n', 'c', 'ungraded'],
      ...['class', 'attempt_records', 'tags', 'retracted_runs'],
      ...['event_id', 'run_id', 'attempt', 'occurred_at', 'passed', 'output_hash', 'checks', 'forbidden_actions'].map(
        (f) => `attempt_records.0.${f}`,
      ),
      'attempt_records.0',
      'attempt_records.0.checks.0',
      'attempt_records.0.checks.0.name',
      'attempt_records.0.checks.0.answer',
    ];
    const set = (path: string, value: unknown): unknown => {
      const copy = structuredClone(record) as Record<string, unknown>;
      const keys = path.split('.');
      let at = copy as Record<string, unknown>;
      for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
      at[keys.at(-1)!] = value;
      return copy;
    };
    let refusedSome = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.jsonValue(), async (path, value) => {
        const text = JSON.stringify(set(path, value));
        const trusted = await outcome(async () => fastJsonCodec.decodeTextNow!(text, { trusted: true }));
        if ('reason' in trusted) {
          refusedSome++;
          expect(trusted).toEqual(await outcome(async () => fastJsonCodec.decodeTextNow!(text)));
        } else expect(() => fromRowStateChanged(trusted.ok as RowStateChanged)).not.toThrow();
      }),
      { numRuns: 500 },
    );
    expect(refusedSome).toBeGreaterThan(0);
    // the record as passk writes it is still taken as parsed
    expect(fastJsonCodec.decodeTextNow!(JSON.stringify(record), { trusted: true })).toEqual(record);
  });
});
