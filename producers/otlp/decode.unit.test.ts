import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { otlpBodies } from '../../bench/otlpBodies.ts';
import { decodeProtobuf, decodeProtobufViaToObject, encodeTraceRequest, MalformedOtlp } from './decode.ts';

/**
 * `decodeProtobuf` builds the trace request straight from protobufjs's decoded message (issue #25); it must give what
 * `toObject` and the id walk gave, value for value and key for key (the dead letters keep a span's JSON text), and
 * refuse what they refused.
 */
const same = (body: Uint8Array) => {
  let want: unknown;
  let wanted: unknown;
  try {
    want = decodeProtobufViaToObject(body);
  } catch (e) {
    wanted = e;
  }
  if (wanted !== undefined) {
    expect(() => decodeProtobuf(body)).toThrow(MalformedOtlp);
    return;
  }
  const got = decodeProtobuf(body);
  expect(got).toStrictEqual(want);
  expect(JSON.stringify(got)).toBe(JSON.stringify(want));
};

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** An object of the fields that are given (proto3: a default on the wire, such as `""`, is sent and not kept). */
const fields = (shape: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .record(Object.fromEntries(Object.entries(shape).map(([k, a]) => [k, maybe(a)])), { requiredKeys: [] })
    .map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const fixed64 = fc.oneof(
  fc.constant('0'),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  fc.constant('1767225600000000000'),
);
const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme' }));

const { anyValue } = fc.letrec<{ anyValue: Record<string, unknown>; keyValue: Record<string, unknown> }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fields({ stringValue: text }),
    fields({ boolValue: fc.boolean() }),
    fields({ intValue: int64 }),
    fields({ doubleValue: fc.double() }),
    fields({ bytesValue: fc.uint8Array({ maxLength: 12 }) }),
    fields({ arrayValue: fields({ values: fc.array(tie('anyValue'), { maxLength: 3 }) }) }),
    fields({ kvlistValue: fields({ values: fc.array(tie('keyValue'), { maxLength: 3 }) }) }),
  ),
  keyValue: fields({ key: text, value: tie('anyValue') }),
}));
const keyValue = fields({ key: text, value: anyValue });
const attributes = fc.array(keyValue, { maxLength: 4 });
const span = fields({
  traceId: fc.oneof(hex(16), hex(3)),
  spanId: hex(8),
  traceState: text,
  parentSpanId: fc.oneof(hex(8), fc.constant('')),
  name: text,
  kind: fc.integer({ min: 0, max: 7 }),
  startTimeUnixNano: fixed64,
  endTimeUnixNano: fixed64,
  attributes,
  droppedAttributesCount: fc.nat(),
  events: fc.array(fields({ timeUnixNano: fixed64, name: text, attributes, droppedAttributesCount: fc.nat() }), {
    maxLength: 2,
  }),
  droppedEventsCount: fc.nat(),
  links: fc.array(
    fields({
      traceId: hex(16),
      spanId: hex(8),
      traceState: text,
      attributes,
      droppedAttributesCount: fc.nat(),
      flags: fc.nat(),
    }),
    { maxLength: 2 },
  ),
  droppedLinksCount: fc.nat(),
  status: fields({ message: text, code: fc.integer({ min: 0, max: 3 }) }),
  flags: fc.oneof(fc.constant(0x300), fc.constant(0x100), fc.nat()),
});
const request = fields({
  resourceSpans: fc.array(
    fields({
      resource: fields({
        attributes,
        droppedAttributesCount: fc.nat(),
        entityRefs: fc.array(
          fields({
            schemaUrl: text,
            type: text,
            idKeys: fc.array(text, { maxLength: 2 }),
            descriptionKeys: fc.array(text, { maxLength: 2 }),
          }),
          { maxLength: 2 },
        ),
      }),
      scopeSpans: fc.array(
        fields({
          scope: fields({ name: text, version: text, attributes, droppedAttributesCount: fc.nat() }),
          spans: fc.array(span, { maxLength: 4 }),
          schemaUrl: text,
        }),
        { maxLength: 2 },
      ),
      schemaUrl: text,
    }),
    { maxLength: 2 },
  ),
});

describe('decodeProtobuf, straight from the decoded message', () => {
  it('equals the toObject conversion on the bench requests', () => {
    for (const body of otlpBodies(200, 100)) same(body);
  });

  it('equals it on requests with every field, random values and ids', () => {
    fc.assert(
      fc.property(request, (r) => same(encodeTraceRequest(r))),
      { numRuns: 400 },
    );
  });

  it('equals it on two requests concatenated (protobuf merges: singular messages merged, oneof members replaced)', () => {
    fc.assert(
      fc.property(request, request, (a, b) => {
        const x = encodeTraceRequest(a);
        const y = encodeTraceRequest(b);
        const both = new Uint8Array(x.length + y.length);
        both.set(x);
        both.set(y, x.length);
        same(both);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses what it refused, and equals it on damaged bodies that still decode', () => {
    fc.assert(
      fc.property(
        request,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (r, flips) => {
          const body = Buffer.from(encodeTraceRequest(r));
          if (body.length === 0) return;
          for (const [at, value] of flips) body[at % body.length] = value;
          same(body);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('writes 64-bit times and ints as the same decimal text at the edges', () => {
    const edges = ['0', '1', '9007199254740991', '9007199254740992', '9007199254740993', '18446744073709551615'];
    const ints = ['-1', '-9007199254740993', '-9223372036854775808', '9223372036854775807', '-2097152', '4294967296'];
    const body = encodeTraceRequest({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: edges.map((t, i) => ({
                traceId: 'ab'.repeat(16),
                spanId: `${i}`.padStart(16, '0'),
                name: 's',
                startTimeUnixNano: t,
                endTimeUnixNano: t,
                attributes: ints.map((v) => ({ key: v, value: { intValue: v } })),
              })),
            },
          ],
        },
      ],
    });
    same(body);
    const spans = decodeProtobuf(body).resourceSpans![0]!.scopeSpans![0]!.spans!;
    expect(spans.map((s) => s.startTimeUnixNano)).toEqual(edges.map((t) => (t === '0' ? undefined : t)));
    expect(spans[0]!.attributes!.map((a) => a.value!.intValue)).toEqual(ints);
  });
});
