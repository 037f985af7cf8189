import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { EventLog } from '../../processors/ports.ts';
import { createIngestServer, type IngestServer } from '../../producers/ingest/index.ts';
import { decodeStatus } from '../../producers/otlp/index.ts';
import { readLog } from '../../producers/logReader.ts';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { exportWith, JsonExporter, ProtoExporter } from '../helpers/genaiAgent.ts';

const TOKEN = 'test-otlp-token-0123456789abc';
const dir = mkdtempSync(join(tmpdir(), 'passk-otlp-'));
let log: EventLog;
let server: IngestServer;

beforeAll(async () => {
  log = await createEmbeddedEventLog({ dataDir: dir });
  server = await createIngestServer({
    publisher: log.publisher,
    token: TOKEN,
    port: 0,
    otlp: { policy: { name: 'otlp-test', rate: 1, segments: { free: 0.5 } }, seed: 7 },
  });
});
afterAll(async () => {
  await server.close();
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

const tracesOnLog = async (): Promise<TraceSampled[]> => {
  const out: TraceSampled[] = [];
  await readLog(log, { topics: ['passk.traces'] }, (e) => out.push(e.event as TraceSampled));
  return out;
};

const headers = { Authorization: `Bearer ${TOKEN}` };

describe('OTLP/HTTP receiver (POST /v1/traces)', () => {
  it('takes GenAI spans from the real OpenTelemetry SDK, protobuf and JSON, into sampled, redacted traces', async () => {
    const url = new URL('/v1/traces', server.url).href;
    const protoIds = await exportWith(new ProtoExporter({ url, headers }), 12, 'enterprise');
    const jsonIds = await exportWith(new JsonExporter({ url, headers }), 12, 'enterprise', 100);
    const freeIds = await exportWith(new ProtoExporter({ url, headers }), 40, 'free', 200);

    const traces = await tracesOnLog();
    const byId = new Map(traces.map((t) => [t.trace_id, t]));
    // Every enterprise trace is kept (rate 1) whatever the encoding; batches of 7 split children from roots.
    for (const id of [...protoIds, ...jsonIds]) expect(byId.has(id)).toBe(true);
    const t = byId.get(protoIds[3]!)!;
    expect(t).toMatchObject({
      type: 'TraceSampled',
      agent_version: 'refund-bot-v2',
      segment: 'enterprise',
      producer: expect.stringMatching(/^passk-otlp\//),
      sampling: { policy: expect.stringMatching(/^otlp-test@/), probability: 1 },
      verdicts: [{ grader: 'policy_check', passed: false }],
      user_signals: { thumbs: 'neutral' },
      actions: [{ tool: 'lookup_order', arguments: { order: 3, email: '[EMAIL]' } }],
      tokens: { input: 120, output: 30 },
    });
    expect(t.tags).toEqual(expect.arrayContaining(['model:gpt-4o', 'agent:refund-bot', 'conversation:conv-3']));
    expect(t.payload?.input).toContain('refund order 3');
    expect(t.payload?.input).toContain('[EMAIL]');
    expect(t.payload?.output).toContain('Refunded order 3');
    expect(t.payload?.output).not.toContain('555 0134');
    expect(byId.get(jsonIds[5]!)).toMatchObject({ trace_id: jsonIds[5], actions: [{ tool: 'lookup_order' }] });
    // The first request of each run failed: always kept, with its error kind.
    expect(byId.get(protoIds[0]!)).toMatchObject({ error_kind: 'RefundTimeout' });

    // The free segment is sampled at 0.5; the error trace is always kept (probability 1).
    const free = freeIds.map((id) => byId.get(id)).filter((x) => x !== undefined);
    expect(byId.get(freeIds[0]!)!.sampling.probability).toBe(1);
    const sampled = free.filter((x) => x.sampling.probability === 0.5);
    expect(sampled.length).toBeGreaterThan(5);
    expect(sampled.length).toBeLessThan(35);

    // Planted PII is not on disk, anywhere in the data dir.
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      expect(bytes).not.toMatch(/jane\.doe\d+@example\.com/);
      expect(bytes).not.toContain('415 555 0134');
    }
  }, 60_000); // four OpenTelemetry SDK runs; seconds on a loaded machine

  it('answers a retried export without recording a trace twice', async () => {
    const body = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.version', value: { stringValue: 'svc-1' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'invoke_agent',
                  startTimeUnixNano: '1700000000000000000',
                  endTimeUnixNano: '1700000001000000000',
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
                    { key: 'passk.segment', value: { stringValue: 'enterprise' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    const send = () =>
      fetch(new URL('/v1/traces', server.url), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
    const first = await send();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({});
    const gzipped = await fetch(new URL('/v1/traces', server.url), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(body),
    });
    expect(gzipped.status).toBe(200);
    // The re-sent root changed nothing: it is recognized (the trace's late window) and not recorded again.
    const same = (await tracesOnLog()).filter((t) => t.trace_id === '0af7651916cd43dd8448eb211c80319c');
    expect(same.length).toBe(1);
    expect(same[0]).toMatchObject({ agent_version: 'svc-1', occurred_at: 1_700_000_001_000 });
  });

  it('rejects spans it cannot map in partial_success, and malformed bodies with 400, publishing nothing', async () => {
    const before = (await tracesOnLog()).length;
    const post = (body: string | Uint8Array, type: string, auth = true) =>
      fetch(new URL('/v1/traces', server.url), {
        method: 'POST',
        headers: { ...(auth ? headers : {}), 'content-type': type },
        body,
      });
    const noVersion = await post(
      JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '1af7651916cd43dd8448eb211c80319c',
                    spanId: 'c7ad6b7169203331',
                    name: 'GET /health',
                    attributes: [{ key: 'http.method', value: { stringValue: 'GET' } }],
                  },
                ],
              },
            ],
          },
        ],
      }),
      'application/json',
    );
    expect(noVersion.status).toBe(200);
    const partial = (await noVersion.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    expect(Number(partial.partialSuccess.rejectedSpans)).toBe(1);
    expect(partial.partialSuccess.errorMessage).toMatch(/GET \/health.*no gen_ai/);

    const garbage = await post(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), 'application/x-protobuf');
    expect(garbage.status).toBe(400);
    expect(garbage.headers.get('content-type')).toBe('application/x-protobuf');
    expect(decodeStatus(new Uint8Array(await garbage.arrayBuffer()))).toMatchObject({
      code: 3,
      message: expect.stringMatching(/not an OTLP ExportTraceServiceRequest \(protobuf\)/),
    });
    const notJson = await post('{"resourceSpans": [', 'application/json');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { message: string }).message).toMatch(/not valid JSON/);
    const badId = await post(
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'zz', spanId: '01', name: 'x' }] }] }] }),
      'application/json',
    );
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { message: string }).message).toMatch(/traceId: not a hex id/);
    const wrongShape = await post(JSON.stringify({ resourceSpans: 5 }), 'application/json');
    expect(wrongShape.status).toBe(400);
    expect((await post('{}', 'text/plain')).status).toBe(415);
    expect((await post('{}', 'application/json', false)).status).toBe(401);
    expect((await tracesOnLog()).length).toBe(before);
  });
});
