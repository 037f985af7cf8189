import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { createIngestServer } from '../../producers/ingest/index.ts';
import {
  DEFAULT_SCOPE,
  LOOK_ALIKES,
  missedTargets,
  PII_CORPUS,
  printScore,
  scoreCorpus,
} from '../../producers/redaction/corpus.testkit.ts';
import { passk, passkServer } from '../browser/processes.ts';

/**
 * Issue #27: the redaction corpus end to end, both ways in. Every PII value and every look-alike is the input of
 * its own trace, sent (1) as a JSON-lines file through `passk sample` and (2) as OTLP/JSON spans to the ingest
 * server's `POST /v1/traces`; `passk process` stores them, and each trace is read back from the dashboard API
 * (`passk serve`: `/api/traces`, and `/api/trace` for every 20th). Recall per category and precision per look-alike
 * kind are printed for each path; the default scope leaks nothing, recall is ≥ 99%, precision ≥ 99%, and no
 * default-scope value is in any byte of the event log.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-redaction-corpus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN = 'redaction-corpus-token-0123456789';
/** Event times within the store's trace retention. */
const T0 = Date.now() - 3_600_000;

const texts = [...PII_CORPUS.map((e) => e.text), ...LOOK_ALIKES.map((l) => l.text)];
const canonical = (t: string): string => {
  try {
    return JSON.stringify(JSON.parse(t));
  } catch {
    return t;
  }
};

/** Every byte under a directory but the store's table definitions (`*.sql`: a base-32 alphabet is digits too). */
const allBytes = (d: string): string =>
  readdirSync(d)
    .map((f) => join(d, f))
    .filter((p) => !p.endsWith('.sql'))
    .map((p) => (statSync(p).isDirectory() ? allBytes(p) : readFileSync(p).toString('utf8')))
    .join('\n');

const check = (path: string, outputs: readonly string[], data: string): void => {
  const score = scoreCorpus(
    (_, i) => outputs[i]!,
    (a, b) => canonical(a) === canonical(b),
  );
  printScore(`${path}: ${PII_CORPUS.length} PII values, ${LOOK_ALIKES.length} look-alikes`, score);
  expect(missedTargets(score)).toEqual([]);
  // every byte of the data directory (the log's SQLite pages and WAL, the store's parts): no default-scope value's
  // needle of 8+ characters, as it was written (a short needle turns up in binary by chance), unless a look-alike,
  // which is stored as it is, holds the same digits
  const bytes = allBytes(data);
  const lookAlikes = LOOK_ALIKES.map((l) => l.text).join('\n');
  const onDisk = PII_CORPUS.filter(
    (e) => DEFAULT_SCOPE.includes(e.category) && e.needle.length >= 8 && !lookAlikes.includes(e.needle),
  );
  expect(onDisk.length).toBeGreaterThan(300);
  expect(onDisk.filter((e) => bytes.includes(e.needle)).map((e) => e.text)).toEqual([]);
};

describe('the redaction corpus end to end', () => {
  it('passk sample → process → the API: recall and precision per category', async () => {
    const data = join(dir, 'sample');
    const file = join(dir, 'traces.jsonl');
    writeFileSync(
      file,
      texts
        .map((input, i) => JSON.stringify({ trace_id: `c${i}`, agent_version: 'v1', input, occurred_at: T0 + i }))
        .join('\n'),
    );
    const sampled = await passk(['--data-dir', data, 'sample', file, '--rate', '1', '--json']);
    expect(sampled.code, sampled.stderr).toBe(0);
    check(
      'passk sample',
      await readBack(
        data,
        texts.map((_, i) => `c${i}`),
      ),
      data,
    );
  }, 600_000);

  it('OTLP/JSON → POST /v1/traces → process → the API: recall and precision per category', async () => {
    const data = join(dir, 'otlp');
    const log = await createEmbeddedEventLog({ dataDir: data });
    const server = await createIngestServer({ publisher: log.publisher, token: TOKEN, port: 0 });
    try {
      for (let from = 0; from < texts.length; from += 100) {
        const spans = texts.slice(from, from + 100).map((text, k) => {
          const i = from + k;
          return {
            traceId: (i + 1).toString(16).padStart(32, '0'),
            spanId: (i + 1).toString(16).padStart(16, '0'),
            name: 'chat',
            startTimeUnixNano: String(BigInt(T0 + i) * 1_000_000n),
            endTimeUnixNano: String(BigInt(T0 + i + 1) * 1_000_000n),
            attributes: [
              { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
              { key: 'passk.agent_version', value: { stringValue: 'v1' } },
              { key: 'gen_ai.prompt', value: { stringValue: text } },
            ],
          };
        });
        const res = await fetch(new URL('/v1/traces', server.url), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] }),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        expect(await res.text()).not.toContain('rejectedSpans":"');
      }
    } finally {
      await server.close();
      await log.close();
    }
    // OTLP trace ids are hex: the API is asked by them
    const byHex = texts.map((_, i) => (i + 1).toString(16).padStart(32, '0'));
    const outputs = await readBack(data, byHex);
    check('OTLP /v1/traces', outputs, data);
  }, 600_000);
});

/**
 * What the API shows of each trace's input, after `passk process`: the trace list (`/api/traces`, one page of all of
 * them), and for every 20th trace the trace view (`/api/trace`), which must show the same input. (One `/api/trace`
 * per trace, three store queries each, took about a minute of this file's two.)
 */
const readBack = async (data: string, ids: readonly string[]): Promise<string[]> => {
  const processed = await passk(['--data-dir', data, 'process', '--until-caught-up']);
  expect(processed.code, processed.stderr).toBe(0);
  const server = await passkServer(['--data-dir', data, 'serve', '--port', '0', '--no-process', '--json'], (line) =>
    line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined,
  );
  try {
    const r = await fetch(`${server.value}api/traces?limit=1000`);
    expect(r.status).toBe(200);
    const list = (await r.json()) as { total: number; traces: { trace_id: string; input: string }[] };
    expect(list.total).toBe(ids.length);
    const inputOf = new Map(list.traces.map((t) => [t.trace_id, t.input]));
    const out = ids.map((id) => inputOf.get(id)!);
    expect(out.filter((input) => input === undefined)).toEqual([]);
    for (let i = 0; i < ids.length; i += 20) {
      const one = await fetch(`${server.value}api/trace?trace_id=${ids[i]}`);
      expect(one.status, `trace ${ids[i]}`).toBe(200);
      expect(((await one.json()) as { input: string }).input, `trace ${ids[i]}`).toBe(out[i]);
    }
    return out;
  } finally {
    await server.stop();
  }
};
