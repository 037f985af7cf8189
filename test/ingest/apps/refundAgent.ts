/**
 * A small refund agent instrumented the way a production team would, with one convention's own library from npm,
 * exporting over OTLP/HTTP to `passk ingest` (PASSK_URL, PASSK_TOKEN) and calling a local OpenAI-compatible server
 * (OPENAI_BASE_URL). Run as `node --import tsx refundAgent.ts <otel|openinference|openllmetry|vercel> N`.
 * Request i asks to refund order i for jane.doe<i>@example.com (user `user-i`, session `sess-i`); the model calls
 * the tool `lookup_order` once, then answers `Refunded order i.`; request 0's second message holds `FAIL`, so its
 * model call fails. Prints one JSON line per request: `{"i", "trace_id"}`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the libraries are loaded with require(), as an app would */
import { context, propagation, trace, type Span } from '@opentelemetry/api';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [mode, count] = process.argv.slice(2) as [string, string];
const N = Number(count);
const base = process.env.PASSK_URL!.replace(/\/$/, '');
const headers = { Authorization: `Bearer ${process.env.PASSK_TOKEN}` };
const openaiBase = process.env.OPENAI_BASE_URL!;
const prompt = (i: number) => `refund order ${i}, mail me at jane.doe${i}@example.com${i === 0 ? ' FAIL' : ''}`;
const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'lookup_order',
      description: 'Looks an order up',
      parameters: { type: 'object', properties: { order: { type: 'number' } }, required: ['order'] },
    },
  },
];
const print = (i: number, traceId: string) => process.stdout.write(`${JSON.stringify({ i, trace_id: traceId })}\n`);

/** Two chat calls of the official `openai` client: the tool call, then the answer after the tool's result. */
const chat = async (OpenAI: new (o: object) => any, i: number) => {
  const client = new OpenAI({ baseURL: openaiBase, apiKey: 'sk-local', maxRetries: 0 });
  const messages: any[] = [
    { role: 'system', content: 'You process refunds.' },
    { role: 'user', content: prompt(i) },
  ];
  const first = await client.chat.completions.create({ model: 'gpt-4o', messages, tools });
  const call = first.choices[0].message.tool_calls[0];
  messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"status":"shipped"}' });
  const second = await client.chat.completions.create({ model: 'gpt-4o', messages });
  return second.choices[0].message.content as string;
};

if (mode === 'otel') {
  // The official instrumentation: spans over /v1/traces, message content as GenAI log records over /v1/logs. The
  // agent is called by a gateway: its root span continues a W3C traceparent (a remote parent).
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
  const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
  const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core');
  const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
  const { registerInstrumentations } = createRequire(require.resolve('@opentelemetry/instrumentation-openai'))(
    '@opentelemetry/instrumentation',
  );
  const resource = resourceFromAttributes({ 'service.name': 'refunds', 'service.version': 'refunds-2.3.0' });
  const tp = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  tp.register({ propagator: new W3CTraceContextPropagator() });
  const lp = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${base}/v1/logs`, headers }) })],
  });
  registerInstrumentations({
    instrumentations: [new OpenAIInstrumentation({ captureMessageContent: true })],
    loggerProvider: lp,
  });
  const OpenAI = require('openai');
  const tracer = trace.getTracer('refund-agent');
  for (let i = 0; i < N; i++) {
    const gateway = { traceparent: `00-${(i + 1).toString(16).padStart(32, 'a')}-${'b'.repeat(16)}-01` };
    const parent = propagation.extract(context.active(), gateway);
    await tracer.startActiveSpan(
      'POST /refund',
      { attributes: { 'user.id': `user-${i}`, 'session.id': `sess-${i}` } },
      parent,
      async (span: Span) => {
        print(i, span.spanContext().traceId);
        try {
          await chat(OpenAI, i);
        } catch (e) {
          span.recordException(e as Error);
          span.setStatus({ code: 2, message: (e as Error).message });
        }
        span.end();
      },
    );
  }
  await tp.forceFlush();
  await lp.forceFlush();
  await tp.shutdown();
  await lp.shutdown();
}

if (mode === 'openinference') {
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
  const { traceAgent, traceTool, setSession, setUser } = require('@arizeai/openinference-core');
  const tp = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'refunds', 'service.version': 'refunds-oi-1' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  tp.register();
  const openai = require('openai');
  new OpenAIInstrumentation().manuallyInstrument(openai);
  const lookup = traceTool(async (args: { order: number }) => ({ status: 'shipped', order: args.order }), {
    name: 'lookup_order',
  });
  for (let i = 0; i < N; i++) {
    // The question is the agent span's input.value (traceAgent records its argument).
    const agent = traceAgent(
      async (_question: string) => {
        print(i, trace.getActiveSpan()!.spanContext().traceId);
        await lookup({ order: i });
        return chat(openai, i);
      },
      { name: 'refund-agent' },
    );
    const ctx = setSession(setUser(context.active(), { userId: `user-${i}` }), { sessionId: `sess-${i}` });
    await context.with(ctx, () => agent(prompt(i))).catch(() => undefined);
  }
  await tp.forceFlush();
  await tp.shutdown();
}

if (mode === 'openllmetry') {
  // The Traceloop SDK out of the box: its own OTLP exporter to TRACELOOP_BASE_URL, no service.version anywhere.
  const traceloop = require('@traceloop/node-server-sdk');
  const openai = require('openai').default ?? require('openai');
  traceloop.initialize({
    baseUrl: base,
    apiKey: process.env.PASSK_TOKEN,
    appName: 'refunds',
    disableBatch: true,
    silenceInitializationMessage: true,
    instrumentModules: { openAI: openai },
  });
  for (let i = 0; i < N; i++)
    await traceloop.withWorkflow(
      { name: 'refund_flow', associationProperties: { user_id: `user-${i}`, session_id: `sess-${i}` } },
      async (_question: string) => {
        const span = trace.getActiveSpan()!;
        print(i, span.spanContext().traceId);
        await traceloop.withTool({ name: 'lookup_order' }, async (args: object) => args, { order: i });
        // OpenLLMetry 0.27 never ends a workflow span whose function throws (nor exports a failed model call):
        // the error is caught and recorded on the workflow's span, as its docs' examples do.
        return chat(openai, i).catch((e: Error) => {
          span.recordException(e);
          span.setStatus({ code: 2, message: e.message });
          return _question;
        });
      },
      prompt(i),
    );
  await traceloop.forceFlush();
}

if (mode === 'vercel') {
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { generateText, tool, stepCountIs } = await import('ai');
  const { createOpenAI } = await import('@ai-sdk/openai');
  const { z } = await import('zod');
  const roots: string[] = [];
  const tp = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'refunds', 'service.version': 'refunds-ai-1' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces`, headers })),
      {
        onStart: () => undefined,
        onEnd: (s: { parentSpanContext?: unknown; spanContext: () => { traceId: string } }) =>
          s.parentSpanContext ? undefined : roots.push(s.spanContext().traceId),
        forceFlush: async () => undefined,
        shutdown: async () => undefined,
      },
    ],
  });
  tp.register();
  const provider = createOpenAI({ baseURL: openaiBase, apiKey: 'sk-local' });
  for (let i = 0; i < N; i++) {
    await generateText({
      model: provider.chat('gpt-4o'),
      system: 'You process refunds.',
      prompt: prompt(i),
      maxRetries: 0,
      tools: {
        lookup_order: tool({
          description: 'Looks an order up',
          inputSchema: z.object({ order: z.number() }),
          execute: async ({ order }) => ({ status: 'shipped', order }),
        }),
      },
      stopWhen: stepCountIs(3),
      experimental_telemetry: {
        isEnabled: true,
        functionId: 'refund',
        metadata: { userId: `user-${i}`, sessionId: `sess-${i}` },
      },
    }).catch(() => undefined);
    print(i, roots[roots.length - 1]!);
  }
  await tp.forceFlush();
  await tp.shutdown();
}
process.exit(0);
