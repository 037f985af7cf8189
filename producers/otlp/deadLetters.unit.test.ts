import { describe, expect, it } from 'vitest';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import type { KeyValue, OtlpSpan } from './decode.ts';
import { LETTER_MAX_CHARS } from './deadLetters.ts';
import { createOtlpReceiver } from './receiver.ts';

const kv = (attrs: Record<string, string>): KeyValue[] =>
  Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } }));
const T = (n: number) => n.toString(16).padStart(32, '0');
const S = (n: number) => n.toString(16).padStart(16, '0');
const span = (trace: number, id: number, parent: number | undefined, attrs: Record<string, string>): OtlpSpan => ({
  traceId: T(trace),
  spanId: S(id),
  ...(parent === undefined ? {} : { parentSpanId: S(parent) }),
  name: 'span',
  startTimeUnixNano: '1700000000000000000',
  endTimeUnixNano: '1700000001000000000',
  attributes: kv(attrs),
});
const body = (...spans: OtlpSpan[]) =>
  Buffer.from(
    JSON.stringify({
      resourceSpans: [{ resource: { attributes: kv({ 'service.name': 'refunds' }) }, scopeSpans: [{ spans }] }],
    }),
  );
const decoded = (v: Uint8Array) => JSON.parse(Buffer.from(v).toString('utf8')) as Record<string, unknown>;

describe('the OTLP receiver dead-letters what it refuses or evicts', () => {
  it('appends each refused span once, redacted, with its reason and the ingest path, before it answers', async () => {
    const publisher = createMemoryPublisher();
    const receiver = createOtlpReceiver({ publisher });
    try {
      // a plain HTTP root with one child: both refused (no convention), one letter each
      const plain = body(
        span(1, 1, undefined, { 'http.route': '/refund', 'user.email': 'jane.doe@example.com' }),
        span(1, 2, 1, { 'http.method': 'GET' }),
      );
      const first = await receiver.export(plain, 'json');
      expect(first.rejected).toBe(2);
      expect(publisher.deadLetters).toHaveLength(2);
      const [root] = publisher.deadLetters;
      expect(root).toMatchObject({
        source: { topic: 'otlp:/v1/traces', partition: -1, offset: -1, key: `${T(1)}/${S(1)}` },
        reason: expect.stringMatching(/^no_convention: span "span" \(0+1\) and its children follow no LLM convention/),
        id: expect.stringMatching(/^otlp:\/v1\/traces\//),
      });
      // the letter is the span alone as an OTLP/JSON export request, with its resource; the email is redacted
      const text = Buffer.from(root!.value).toString('utf8');
      expect(text).not.toContain('jane.doe@example.com');
      expect(text).toContain('[EMAIL]');
      expect(decoded(root!.value)).toMatchObject({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'refunds' } }] },
            scopeSpans: [{ spans: [{ traceId: T(1), spanId: S(1) }] }],
          },
        ],
      });
      // the same request again: refused again, no new letter
      await receiver.export(plain, 'json');
      expect(publisher.deadLetters).toHaveLength(2);
      expect(receiver.stats.deadLetters).toBe(2);
    } finally {
      await receiver.close();
    }
  });

  it('appends each evicted span once, and clips a large one, saying so', async () => {
    const publisher = createMemoryPublisher();
    const receiver = createOtlpReceiver({ publisher, assembly: { maxHeldBytes: 700_000 } });
    try {
      const prompt = `call me on 415 555 0134 ${'x'.repeat(300_000)}`;
      for (let t = 1; t <= 3; t++)
        await receiver.export(
          body(span(t, 10 + t, 1, { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': prompt })),
          'json',
        );
      // the first trace's child was evicted to keep the bound; the next export dead-lettered it
      expect(receiver.stats.rejected.evicted).toBe(1);
      expect(publisher.deadLetters).toHaveLength(1);
      const [evicted] = publisher.deadLetters;
      expect(evicted!.reason).toMatch(/^evicted: trace 0+1: 1 spans evicted: held spans over the 700000-byte bound/);
      expect(evicted!.reason).toContain('letter clipped');
      const text = Buffer.from(evicted!.value).toString('utf8');
      expect(text.length).toBeLessThan(LETTER_MAX_CHARS + 2_000);
      expect(text).not.toContain('555 0134');
      expect(text).toMatch(/more characters\]/);
    } finally {
      await receiver.close();
    }
  });
});
