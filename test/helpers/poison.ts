import fc from 'fast-check';
import { deterministicEventId } from '../../schemas/ids.ts';

/** Arbitrary record bytes for the poison-record tests (issue #13): garbage, broken JSON, lone surrogates, control
 * characters, huge numbers, nesting far past what JSON.stringify can write back; some of them valid events. */
export const base = {
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
export const deep = (n: number, leaf: unknown = 1): unknown => {
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
/** A trial with some fields replaced by anything, and some added, as JSON text. */
export const mutatedTrial = fc
  .record({
    fields: fc.dictionary(
      fc.constantFrom('row_id', 'run_id', 'attempt', 'passed', 'output', 'suite', 'agent', 'checks', 'tags', 'x'),
      anyValue,
      { maxKeys: 3 },
    ),
    arguments: fc.option(anyValue, { nil: undefined }),
    salt: fc.nat({ max: 50 }),
  })
  .map(({ fields, arguments: args, salt }) =>
    JSON.stringify({
      ...base,
      event_id: deterministicEventId(base.occurred_at, 'prop', salt),
      row_id: `r${salt}`,
      ...fields,
      ...(args === undefined ? {} : { actions: [{ tool: 't', arguments: { a: args } }] }),
    }),
  );
export const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  mutatedTrial.map((t) => new TextEncoder().encode(t)),
  deepText.map((t) => new TextEncoder().encode(t)),
  fc.tuple(mutatedTrial, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([t, at, b]) => {
    const bytes = new TextEncoder().encode(t);
    bytes[at % bytes.length] = b; // one corrupted byte
    return bytes;
  }),
);
