import { context, trace, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export { JsonExporter, ProtoExporter };

/** A small instrumented agent: an invoke_agent root, a chat call and a tool call, with PII planted. */
export const runAgent = (tracer: Tracer, i: number, opts: { segment: string; fail?: boolean }) => {
  const root = tracer.startSpan('invoke_agent refund-bot', {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'refund-bot',
      'gen_ai.agent.version': 'refund-bot-v2',
      'gen_ai.conversation.id': `conv-${i}`,
      'passk.segment': opts.segment,
      'passk.verdict.policy_check': i % 2 === 0,
      'passk.user_signal.thumbs': i % 2 === 0 ? 'up' : 'neutral',
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: `refund order ${i}, mail me at jane.doe${i}@example.com` }] },
      ]),
    },
  });
  const ctx = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan(
    'chat gpt-4o',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
      },
    },
    ctx,
  );
  chat.addEvent('gen_ai.client.inference.operation.details', {
    'gen_ai.output.messages': JSON.stringify([
      { role: 'assistant', parts: [{ type: 'tool_call', name: 'lookup_order', arguments: { order: i } }] },
    ]),
  });
  chat.end();
  const tool = tracer.startSpan(
    'execute_tool lookup_order',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup_order',
        'gen_ai.tool.call.arguments': JSON.stringify({ order: i, email: `jane.doe${i}@example.com` }),
      },
    },
    ctx,
  );
  tool.end();
  if (opts.fail) {
    root.recordException({ name: 'RefundTimeout', message: 'gave up' });
    root.setAttribute('error.type', 'RefundTimeout');
    root.setStatus({ code: SpanStatusCode.ERROR, message: 'gave up' });
  } else
    root.setAttribute(
      'gen_ai.output.messages',
      JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: `Refunded order ${i}. Call +1 415 555 0134 if not.` }] },
      ]),
    );
  root.end();
  return root.spanContext().traceId;
};

/** Runs `n` requests of the agent under the real OpenTelemetry SDK, exported in batches of 7 spans; their trace ids. */
export const exportWith = async (exporter: ProtoExporter | JsonExporter, n: number, segment: string, offset = 0) => {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'refund-service', 'service.version': '9.9.9' }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 7, scheduledDelayMillis: 10 })],
  });
  const tracer = provider.getTracer('refund-agent');
  const ids = Array.from({ length: n }, (_, i) => runAgent(tracer, offset + i, { segment, fail: i === 0 }));
  await provider.forceFlush();
  await provider.shutdown();
  return ids;
};
