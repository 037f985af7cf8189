/**
 * The OTLP bench's export requests (bench/otlp.ts): 3-span traces with ~1.5 KB of text and an email in each input.
 * Pure (no log, no server), so the decoder's unit test reads the same requests.
 */
import { encodeTraceRequest } from '../producers/otlp/index.ts';

export const kv = (key: string, v: string | number) => ({
  key,
  value: typeof v === 'string' ? { stringValue: v } : { intValue: String(v) },
});
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const CONTEXT = 'Customer writes about an order that arrived damaged; policy allows refunds within 30 days. ';

/** One request's 3 spans: the agent's root, a chat call and a tool call, ~1.5 KB of text. */
export const spansOf = (i: number) => {
  const traceId = hex(i + 1, 32);
  const at = 1_767_225_600_000_000_000n + BigInt(i) * 1_000_000n;
  const span = (id: number, parent: number | undefined, name: string, attrs: ReturnType<typeof kv>[]) => ({
    traceId,
    spanId: hex(i * 4 + id, 16),
    ...(parent === undefined ? {} : { parentSpanId: hex(i * 4 + parent, 16) }),
    name,
    startTimeUnixNano: String(at),
    endTimeUnixNano: String(at + 900_000_000n),
    attributes: attrs,
  });
  return [
    span(1, 2, 'chat gpt-4o', [
      kv('gen_ai.operation.name', 'chat'),
      kv('gen_ai.request.model', 'gpt-4o'),
      kv('gen_ai.usage.input_tokens', 320),
      kv('gen_ai.usage.output_tokens', 60),
      kv('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', content: `${CONTEXT.repeat(4)} #${i}` }])),
    ]),
    span(3, 2, 'execute_tool lookup_order', [
      kv('gen_ai.operation.name', 'execute_tool'),
      kv('gen_ai.tool.name', 'lookup_order'),
      kv('gen_ai.tool.call.arguments', JSON.stringify({ order: i, note: CONTEXT.repeat(2) })),
    ]),
    span(2, undefined, 'invoke_agent refund-bot', [
      kv('gen_ai.operation.name', 'invoke_agent'),
      kv('gen_ai.agent.version', 'refund-bot-v2'),
      kv('passk.segment', i % 3 === 0 ? 'enterprise' : 'free'),
      kv('user.id', `user-${i % 997}`),
      kv(
        'gen_ai.input.messages',
        JSON.stringify([
          { role: 'user', content: `refund order ${i}, mail jane.doe${i}@example.com. ${CONTEXT.repeat(6)}` },
        ]),
      ),
    ]),
  ];
};

/** The bench's export bodies: `n` traces, `batch` per protobuf export request. */
export const otlpBodies = (n: number, batch: number): Uint8Array[] => {
  const bodies: Uint8Array[] = [];
  for (let i = 0; i < n; i += batch) {
    const spans = Array.from({ length: Math.min(batch, n - i) }, (_, j) => spansOf(i + j)).flat();
    bodies.push(
      encodeTraceRequest({
        resourceSpans: [{ resource: { attributes: [kv('service.name', 'refunds')] }, scopeSpans: [{ spans }] }],
      }),
    );
  }
  return bodies;
};
