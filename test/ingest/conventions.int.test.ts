import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { EventLog } from '../../processors/ports.ts';
import { createIngestServer, type IngestServer } from '../../producers/ingest/index.ts';
import { readLog } from '../../producers/logReader.ts';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { startFakeOpenAi, type FakeOpenAi } from '../helpers/fakeOpenAi.ts';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { traceById } from '../../web/queries.ts';
import { passk } from '../browser/processes.ts';

/**
 * Every common LLM instrumentation, as its own library from npm produces it, through `passk ingest`'s OTLP receiver:
 * the official OpenTelemetry OpenAI instrumentation (content as OTLP log records, a remote parent from a gateway's
 * traceparent), OpenInference, the OpenLLMetry SDK out of the box (no service.version) and the Vercel AI SDK. Each runs
 * in its own process (test/ingest/apps/refundAgent.ts) against a local fake OpenAI server.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const TOKEN = 'conventions-token-0123456789';
const N = 6;
const dir = mkdtempSync(join(tmpdir(), 'passk-conventions-'));
let log: EventLog;
let server: IngestServer;
let fake: FakeOpenAi;

beforeAll(async () => {
  log = await createEmbeddedEventLog({ dataDir: dir });
  server = await createIngestServer({ publisher: log.publisher, token: TOKEN, port: 0 });
  fake = await startFakeOpenAi();
});
let closed = false;
const stop = async () => {
  if (closed) return;
  closed = true;
  await server.close();
  await log.close();
};
afterAll(async () => {
  await stop();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (mode: string): Promise<string[]> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'apps', 'refundAgent.ts'), mode, String(N)], {
      env: { ...process.env, PASSK_URL: server.url, PASSK_TOKEN: TOKEN, OPENAI_BASE_URL: fake.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${mode} exited ${code}: ${err}`));
      const ids: string[] = [];
      for (const line of out.trim().split('\n')) {
        const { i, trace_id } = JSON.parse(line) as { i: number; trace_id: string };
        ids[i] = trace_id;
      }
      resolve(ids);
    });
  });

/** The latest revision of each trace on the log. */
const traces = async (): Promise<Map<string, TraceSampled>> => {
  const out = new Map<string, TraceSampled>();
  await readLog(log, { topics: ['passk.traces'] }, (e) => {
    const t = e.event as TraceSampled;
    const before = out.get(t.trace_id);
    if (!before || (t.revision ?? 0) >= (before.revision ?? 0)) out.set(t.trace_id, t);
  });
  return out;
};

/** The traces once `done` says they are complete, or as they are after `ms` (the assertions then say what lacks). */
const until = async (done: (all: Map<string, TraceSampled>) => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  for (;;) {
    const all = await traces();
    if (done(all) || Date.now() > end) return all;
    await new Promise((r) => setTimeout(r, 200));
  }
};

const runs = new Map<string, string[]>();
const files = (d: string): string[] =>
  readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));

describe.each([
  ['otel', 'refunds-2.3.0'],
  ['openinference', 'refunds-oi-1'],
  ['openllmetry', 'unversioned'],
  ['vercel', 'refunds-ai-1'],
])('%s through passk ingest', (mode, version) => {
  it('keeps every trace with input, output, tokens, tools, error, user, session and latency, and no PII', async () => {
    const ids = await run(mode);
    expect(ids.length).toBe(N);
    runs.set(mode, ids);
    const got = await until((all) =>
      ids.every((id, i) => (i === 0 ? all.get(id)?.error_kind : all.get(id)?.payload?.output) !== undefined),
    );
    for (const [i, id] of ids.entries()) {
      const t = got.get(id)!;
      expect(t, `${mode} request ${i}`).toMatchObject({
        agent_version: version,
        user_id: `user-${i}`,
        session_id: `sess-${i}`,
      });
      expect(t.payload?.input).toContain(`refund order ${i}`);
      expect(t.payload?.input).toContain('[EMAIL]');
      expect(t.latency_ms).toBeGreaterThan(0);
      if (i === 0) {
        expect(t.error_kind, `${mode} request 0 failed`).toBeTruthy();
        continue;
      }
      expect(t.error_kind ?? undefined).toBeUndefined();
      expect(t.payload?.output).toContain(`Refunded order ${i}.`);
      expect(t.tokens).toEqual({ input: 22, output: 14 });
      expect(t.model).toBe('gpt-4o');
      expect(t.response_model).toBe('gpt-4o-2024-08-06');
      expect(t.actions?.[0]).toMatchObject({ tool: 'lookup_order', arguments: { order: i } });
    }
    // One fingerprint per distinct request: never one shared "null".
    expect(new Set(ids.map((id) => got.get(id)!.input_fingerprint)).size).toBe(N);
    for (const f of files(dir)) expect(readFileSync(f).toString('latin1'), f).not.toMatch(/jane\.doe\d+@example\.com/);
  }, 120_000);
});

describe('the same traces through passk process', () => {
  it('are in the store with their new fields, filterable in passk review, and no PII anywhere', async () => {
    await stop();
    const processed = await passk(['--data-dir', dir, 'process', '--until-caught-up']);
    expect(processed.code, processed.stderr).toBe(0);
    const store = await openStore(loadConfig({ dataDir: dir }, {}, dir));
    try {
      for (const [mode, ids] of runs)
        for (const [i, id] of ids.entries()) {
          const t = await traceById(store.client, id);
          expect(t, `${mode} ${i}`).toMatchObject({ user_id: `user-${i}`, session_id: `sess-${i}` });
          expect(t!.latency_ms).toBeGreaterThan(0);
          if (i > 0)
            expect(t, `${mode} ${i}`).toMatchObject({
              model: 'gpt-4o',
              response_model: 'gpt-4o-2024-08-06',
              tokens_input: 22,
              tokens_output: 14,
            });
        }
    } finally {
      await store.close();
    }
    // Request 0 failed in every convention: passk review lists the four, and only them for that user.
    const review = await passk(['--data-dir', dir, 'review', '--user', 'user-0', '--json']);
    expect(review.code, review.stderr).toBe(0);
    const listed = (JSON.parse(review.stdout) as { failures: { trace_id: string; user_id: string }[] }).failures;
    expect(listed.map((f) => f.trace_id).sort()).toEqual([...runs.values()].map((ids) => ids[0]).sort());
    for (const f of files(dir)) expect(readFileSync(f).toString('latin1'), f).not.toMatch(/jane\.doe\d+@example\.com/);
  }, 240_000);
});
