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
/** Strings that break readers: lone surrogates, control characters, anything, and the given special strings. */
export const weirdStrings = (...specials: string[]) =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength: 30 }), // lone surrogates included
    fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 10 }),
    fc.string({ maxLength: 12 }),
    ...(specials.length ? [fc.constantFrom(...specials)] : []),
  );

/**
 * Any value for a field: weird strings and numbers, booleans, null, JSON, nesting up to `maxNesting` levels, and the
 * given extra arbitraries (values only an in-memory caller can pass, such as NaN, a bigint or undefined).
 */
export const weirdValues = (opts: {
  strings: fc.Arbitrary<string>;
  numbers: readonly number[];
  maxNesting: number;
  extra?: fc.Arbitrary<unknown>[];
}) =>
  fc.oneof(
    opts.strings,
    fc.double(),
    fc.integer(),
    fc.constantFrom(...opts.numbers),
    fc.boolean(),
    fc.constant(null),
    fc.jsonValue({ maxDepth: 3 }),
    fc.integer({ min: 1, max: opts.maxNesting }).map((n) => deep(n)),
    ...(opts.extra ?? []),
  );

const anyValue = weirdValues({
  strings: weirdStrings(),
  numbers: [2 ** 53, -(2 ** 63), 1e308, Number.MAX_VALUE],
  maxNesting: 3_000,
});
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
