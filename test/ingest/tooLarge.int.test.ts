import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { createOtlpReceiver, type RejectReason } from '../../producers/otlp/receiver.ts';

/**
 * A trace the log refuses (its TraceSampled over the log's largest event) is not only counted: each of its spans is
 * dead-lettered once, redacted, with the reason `too_large`, before the export is answered; the other traces of the
 * export are kept (the embedded log, with a small event limit).
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-otlp-too-large-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const span = (trace: string, id: string, parent: string | undefined, attributes: object[]) => ({
  traceId: trace.repeat(32),
  spanId: id.repeat(16),
  ...(parent ? { parentSpanId: parent.repeat(16) } : {}),
  name: 'invoke_agent refund-bot',
  startTimeUnixNano: '1767225600000000000',
  endTimeUnixNano: '1767225601000000000',
  attributes,
});
const request = (...spans: object[]) =>
  new TextEncoder().encode(
    JSON.stringify({
      resourceSpans: [{ resource: { attributes: [str('service.name', 'refunds')] }, scopeSpans: [{ spans }] }],
    }),
  );
const messages = (content: string) => JSON.stringify([{ role: 'user', content }]);

describe('OTLP traces the log refuses as too large', () => {
  it('are dead-lettered once, span by span, with the reason, and the rest of the export is kept', async () => {
    const log = await createEmbeddedEventLog({ dataDir: dir, maxEventBytes: 6_000 });
    const rejected: { reason: RejectReason; spans: number; message: string }[] = [];
    const receiver = createOtlpReceiver({ publisher: log.publisher, onReject: (r) => rejected.push(r) });
    // a root and its chat call whose input (7,000 characters, clipped to 8,000 when stored) passes the 6,000 bytes
    const big = request(
      span('b', '2', '1', [str('gen_ai.operation.name', 'chat'), str('gen_ai.request.model', 'gpt-4o')]),
      span('b', '1', undefined, [
        str('gen_ai.operation.name', 'invoke_agent'),
        str('gen_ai.input.messages', messages(`mail jane.doe@example.com ${'refund the kettle please. '.repeat(280)}`)),
      ]),
      span('c', '3', undefined, [
        str('gen_ai.operation.name', 'invoke_agent'),
        str('gen_ai.input.messages', messages('hi')),
      ]),
    );
    try {
      const first = await receiver.export(big, 'json');
      expect(first.kept).toBe(1);
      expect(first.rejected).toBe(1);
      expect(first.message).toMatch(/trace b{32} over the event size limit \(PASSK_MAX_EVENT_BYTES\)/);
      // the same export again (an exporter's retry): the trace is known, nothing new is refused or lettered
      await receiver.export(big, 'json');
      expect(receiver.stats.rejected.too_large).toBe(1);
      expect(rejected.filter((r) => r.reason === 'too_large')).toHaveLength(1);
    } finally {
      await receiver.close();
    }
    const letters = await log.deadLetters();
    await log.close();
    expect(letters.map((l) => [l.source.topic, l.source.key, l.reason.split(':')[0]]).sort()).toEqual([
      ['otlp:/v1/traces', `${'b'.repeat(32)}/${'1'.repeat(16)}`, 'too_large'],
      ['otlp:/v1/traces', `${'b'.repeat(32)}/${'2'.repeat(16)}`, 'too_large'],
    ]);
    expect(letters[0]!.reason).toMatch(/exceeds the maximum of 6000 bytes/);
    const texts = letters.map((l) => Buffer.from(l.value).toString('utf8'));
    expect(texts.join('\n')).not.toContain('jane.doe@example.com');
    expect(texts.find((t) => t.includes('refund the kettle'))).toContain('[EMAIL]');
  });
});
