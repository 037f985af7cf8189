import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCodec, validateEvent } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { MAX_NESTING, textProblem } from '../../schemas/wellFormed.ts';

/**
 * Issue #13: whatever a record holds, decoding gives a valid event that every later stage can keep (it
 * re-encodes, stringifies, holds no lone surrogate, is not nested past MAX_NESTING), or an InvalidEvent with
 * a reason (the consumer dead-letters it). Never another error: one would halt the pipeline.
 */
const base = {
  event_id: deterministicEventId(1_767_225_600_000, 'prop'),
  type: 'TrialRecorded',
  schema_version: 1,
  occurred_at: 1_767_225_600_000,
  producer: 'prop',
  suite: 's',
  dataset_version: 'd1',
  row_id: 'r1',
  run_id: 'run-1',
  attempt: 0,
  agent: { version: 'v1' },
  passed: true,
};
const deep = (n: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v };
  return v;
};
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates included
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.string({ maxLength: 20 }),
);
const anyNumber = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(2 ** 53, -(2 ** 63), 1e308, Number.MAX_VALUE));
const anyValue = fc.oneof(
  anyString,
  anyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 1, max: 3_000 }).map((n) => deep(n)),
);
/** Nesting far past what JSON.stringify can write back (about 10,000), as the bytes a foreign writer sends. */
const deepText = fc
  .integer({ min: 1, max: 100_000 })
  .map((n) =>
    JSON.stringify({ ...base, actions: [{ tool: 't', arguments: { a: 0 } }] }).replace(
      '"a":0',
      `"a":${'['.repeat(n)}${']'.repeat(n)}`,
    ),
  );
/** A trial with some fields replaced by anything, and some added, as JSON text (or what a broken writer sends). */
const mutatedTrial = fc
  .record({
    fields: fc.dictionary(
      fc.constantFrom('row_id', 'run_id', 'attempt', 'passed', 'output', 'suite', 'agent', 'checks', 'tags', 'x'),
      anyValue,
      { maxKeys: 3 },
    ),
    arguments: fc.option(anyValue, { nil: undefined }),
  })
  .map(({ fields, arguments: args }) =>
    JSON.stringify({
      ...base,
      ...fields,
      ...(args === undefined ? {} : { actions: [{ tool: 't', arguments: { a: args } }] }),
    }),
  );
const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  mutatedTrial.map((t) => new TextEncoder().encode(t)),
  deepText.map((t) => new TextEncoder().encode(t)),
  fc.tuple(mutatedTrial, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([t, at, b]) => {
    const bytes = new TextEncoder().encode(t);
    bytes[at % bytes.length] = b; // one corrupted byte
    return bytes;
  }),
);

describe('decode under arbitrary bytes', () => {
  it('gives an event every later stage can keep, or an InvalidEvent with a reason; never anything else', async () => {
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(anyBytes, async (bytes) => {
        try {
          const event = await jsonCodec.decode(bytes);
          valid++;
          expect(textProblem(event, MAX_NESTING)).toBeUndefined();
          const again = await jsonCodec.decode(await jsonCodec.encode(event));
          expect(again).toEqual(event);
          expect(() => JSON.stringify(event)).not.toThrow();
        } catch (e) {
          if (!(e instanceof InvalidEvent)) throw e;
          expect(e.reason.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
    expect(valid).toBeGreaterThan(0); // the generator reaches valid events too
  });

  it('refuses a lone surrogate or deep nesting at encode (the SDK and every publisher), naming the field', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0xd800, max: 0xdfff }), async (cp) => {
        const e = { ...base, row_id: `a${String.fromCharCode(cp)}b` };
        await expect(jsonCodec.encode(e as never)).rejects.toThrow(/row_id: holds a lone UTF-16 surrogate/);
      }),
      { numRuns: 50 },
    );
    const nested = { ...base, actions: [{ tool: 't', arguments: { a: deep(10_000) } }] };
    expect(() => validateEvent(nested)).toThrow(new RegExp(`nested deeper than ${MAX_NESTING} levels`));
    expect(() => validateEvent({ ...base, actions: [{ tool: 't', arguments: { a: deep(40) } }] })).not.toThrow();
  });
});
