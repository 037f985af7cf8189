import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { createIngestServer } from '../../producers/ingest/index.ts';
import { traceById } from '../../web/queries.ts';
import { passk } from '../browser/processes.ts';
import { exportWith, JsonExporter, ProtoExporter } from '../helpers/genaiAgent.ts';

/**
 * The OTLP receiver end to end on the embedded backend: the real OpenTelemetry SDK exports GenAI spans to the
 * ingest server, `passk process` fills the store, and the traces are there with their agent version, segment,
 * verdicts, sampling probability and actions (tool calls); the PII planted in span attributes and events is nowhere in the data dir
 * (log and store).
 */
const TOKEN = 'otlp-store-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'passk-otlp-store-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const files = (d: string): string[] =>
  readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });

describe('OTLP traces reach the store', () => {
  it('with agent version, segment, verdicts, sampling probability and actions, and no PII on disk', async () => {
    const log = await createEmbeddedEventLog({ dataDir: data });
    const server = await createIngestServer({
      publisher: log.publisher,
      token: TOKEN,
      port: 0,
      otlp: { policy: { name: 'otlp-store', rate: 1, segments: { free: 0.25 } }, seed: 3 },
    });
    const url = new URL('/v1/traces', server.url).href;
    const headers = { Authorization: `Bearer ${TOKEN}` };
    let ids: string[];
    let free: string[];
    try {
      ids = [
        ...(await exportWith(new ProtoExporter({ url, headers }), 6, 'enterprise')),
        ...(await exportWith(new JsonExporter({ url, headers }), 6, 'enterprise', 50)),
      ];
      free = await exportWith(new ProtoExporter({ url, headers }), 4, 'free', 100);
    } finally {
      await server.close();
      await log.close();
    }

    const processed = await passk(['--data-dir', data, 'process', '--until-caught-up']);
    expect(processed.code, processed.stderr).toBe(0);

    const store = await openStore(loadConfig({ dataDir: data }, {}, dir));
    try {
      for (const [i, id] of ids.entries()) {
        const t = await traceById(store.client, id);
        expect(t, `trace ${id}`).toMatchObject({
          trace_id: id,
          agent_version: 'refund-bot-v2',
          segment: 'enterprise',
          sampling_probability: 1,
          tokens_input: 120,
          tokens_output: 30,
          verdicts: [{ grader: 'policy_check', passed: (i % 6) % 2 === 0 }],
        });
        expect(t!.input).toContain('[EMAIL]');
        expect(t!.actions).toEqual([
          { tool: 'lookup_order', arguments: JSON.stringify({ order: i < 6 ? i : 50 + i - 6, email: '[EMAIL]' }) },
        ]);
      }
      // The first free request failed: always kept, probability 1 in a 0.25 segment.
      expect(await traceById(store.client, free[0]!)).toMatchObject({ segment: 'free', sampling_probability: 1 });
    } finally {
      await store.close();
    }

    for (const f of files(data)) {
      const bytes = readFileSync(f).toString('latin1');
      expect(bytes, f).not.toMatch(/jane\.doe\d+@example\.com/);
      expect(bytes, f).not.toContain('415 555 0134');
    }
  }, 240_000);
});
