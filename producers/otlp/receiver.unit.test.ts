import { describe, expect, it } from 'vitest';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { createOtlpReceiver } from './receiver.ts';

/**
 * A refusal's message quotes what the client sent (a span's name): what `passk ingest` writes to stderr and answers
 * is redacted like a stored trace and safe for a terminal, so an end user's text can neither leak through the log
 * nor drive the terminal of whoever reads it.
 */
describe('the OTLP receiver refusal messages', () => {
  it('are redacted and escape control characters', async () => {
    const logged: string[] = [];
    const receiver = createOtlpReceiver({
      publisher: createMemoryPublisher(),
      onReject: (r) => logged.push(r.message),
    });
    const name = 'refund for jane.doe@example.com \u001b]52;c;aGk=\u0007\u001b[2J\r\u202eGate: PASS';
    const body = JSON.stringify({
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: 'a'.repeat(32), spanId: '1'.repeat(16), name, attributes: [] },
                { spanId: '2'.repeat(16), name, attributes: [] },
              ],
            },
          ],
        },
      ],
    });
    try {
      const answer = await receiver.export(new TextEncoder().encode(body), 'json');
      expect(answer.rejected).toBe(2);
      expect(logged).toHaveLength(2);
      for (const text of [...logged, answer.message]) {
        expect(text).toContain('refund for [EMAIL]');
        expect(text).not.toContain('jane.doe');
        // eslint-disable-next-line no-control-regex
        expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
        expect(text).toContain('\\x1b]52;c;aGk=\\x07\\x1b[2J\\r');
        // the bidi override is dropped by redaction's normalization (an invisible character)
        expect(text).not.toContain('\\u202e');
      }
    } finally {
      await receiver.close();
    }
  });
});
