import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { passk, passkServer } from '../browser/processes.ts';

/**
 * Every span `passk ingest` refuses or evicts is logged once with its reason, dead-lettered once (a re-sent request
 * included), and, after `passk process`, listed with its reason on the dashboard's dead letters and by `passk check`
 * (embedded log and store, the commands as a user runs them).
 */
const TOKEN = 'dead-letters-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'passk-ingest-dlq-'));
const data = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const urlOf = (line: string) => (line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : undefined);
const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const span = (trace: string, id: string, parent: string | undefined, attributes: object[]) => ({
  traceId: trace.repeat(32),
  spanId: id.repeat(16),
  ...(parent ? { parentSpanId: parent.repeat(16) } : {}),
  name: 'span',
  startTimeUnixNano: '1767225600000000000',
  endTimeUnixNano: '1767225601000000000',
  attributes,
});
const body = (...spans: object[]) =>
  JSON.stringify({
    resourceSpans: [{ resource: { attributes: [str('service.name', 'refunds')] }, scopeSpans: [{ spans }] }],
  });

describe('passk ingest dead-letters what it refuses or evicts', () => {
  it('logs, dead-letters and lists each refused and each evicted span once, with its reason', async () => {
    // held spans bounded at 200 KB: a second trace of 150 KB children evicts the first
    const ingest = await passkServer(
      ['--data-dir', data, 'ingest', '--port', '0', '--token', TOKEN, '--json'],
      urlOf,
      120_000,
      { PASSK_OTLP_MAX_HELD_BYTES: '200000' },
    );
    let stderr = '';
    ingest.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const post = async (json: string) => {
      const r = await fetch(new URL('/v1/traces', ingest.value), {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: json,
      });
      expect(r.status).toBe(200);
      return (await r.json()) as { partialSuccess?: { rejectedSpans?: string; errorMessage?: string } };
    };
    const big = 'y'.repeat(150_000);
    try {
      // a plain HTTP root (no LLM convention) whose attribute holds an email, and a GenAI span: 1 refused, 1 kept
      const refused = body(
        span('a', '1', undefined, [str('http.route', '/refund'), str('user.email', 'jane.doe@example.com')]),
        span('b', '2', undefined, [
          str('gen_ai.operation.name', 'chat'),
          str('gen_ai.input.messages', '[{"role":"user","content":"hi"}]'),
        ]),
      );
      const first = await post(refused);
      expect(first.partialSuccess).toMatchObject({ rejectedSpans: '1' });
      expect(first.partialSuccess!.errorMessage).toMatch(/follow no LLM convention/);
      // the same request again (an exporter's retry): refused again, dead-lettered once
      expect((await post(refused)).partialSuccess).toMatchObject({ rejectedSpans: '1' });
      // two traces of held children (their roots never sent): the second evicts the first
      await post(body(span('c', '3', '9', [str('gen_ai.operation.name', 'chat'), str('gen_ai.input.messages', big)])));
      await post(body(span('d', '4', '8', [str('gen_ai.operation.name', 'chat'), str('gen_ai.input.messages', big)])));
    } finally {
      await ingest.stop();
    }
    expect(stderr.match(/OTLP: refused 1 \(no_convention\)/g)).toHaveLength(2);
    expect(stderr.match(/OTLP: refused 1 \(evicted\)/g)).toHaveLength(1);

    // the DLQ holds each once, redacted, with its reason
    const log = await createEmbeddedEventLog({ dataDir: data });
    const letters = await log.deadLetters().finally(() => log.close());
    expect(letters.map((l) => [l.source.topic, l.source.key, l.reason.split(':')[0]]).sort()).toEqual([
      ['otlp:/v1/traces', `${'a'.repeat(32)}/${'1'.repeat(16)}`, 'no_convention'],
      ['otlp:/v1/traces', `${'c'.repeat(32)}/${'3'.repeat(16)}`, 'evicted'],
    ]);
    const texts = letters.map((l) => Buffer.from(l.value).toString('utf8'));
    expect(texts.join('\n')).not.toContain('jane.doe@example.com');
    expect(texts.find((t) => t.includes('/refund'))).toContain('[EMAIL]');
    expect(letters.find((l) => l.reason.startsWith('evicted'))!.reason).toMatch(/letter clipped/);

    const processed = await passk(['--data-dir', data, 'process', '--until-caught-up']);
    expect(processed.code, processed.stderr).toBe(0);

    // the dashboard's dead letters
    const serve = await passkServer(['--data-dir', data, 'serve', '--port', '0', '--no-process', '--json'], urlOf);
    try {
      const r = await fetch(new URL('api/dead-letters', serve.value));
      expect(r.status).toBe(200);
      const dlq = (await r.json()) as {
        total: number;
        by_stage: Record<string, number>;
        letters: { stage: string; source_topic: string; reason: string; preview: string }[];
      };
      expect(dlq.total).toBe(2);
      expect(dlq.by_stage).toEqual({ ingest: 2 });
      expect(dlq.letters.map((l) => [l.stage, l.source_topic, l.reason.split(':')[0]]).sort()).toEqual([
        ['ingest', 'otlp:/v1/traces', 'evicted'],
        ['ingest', 'otlp:/v1/traces', 'no_convention'],
      ]);
    } finally {
      await serve.stop();
    }

    // passk check lists them
    const check = await passk(['--data-dir', data, '--width', '80', 'check']);
    expect(check.stdout).toMatch(/Dead letters \(2\)/);
    expect(check.stdout).toMatch(/2 spans or log records passk ingest refused or evicted/);
    expect(check.stdout).toMatch(/otlp:\/v1\/traces/);
    // CI=true turns colours on (picocolors): the width a terminal shows is the text without its escapes
    for (const line of stripVTControlCharacters(check.stdout).split('\n'))
      expect(line.length, line).toBeLessThanOrEqual(80);
    const json = await passk(['--data-dir', data, 'check', '--json']);
    const report = JSON.parse(json.stdout) as { dead_letters: { total: number }; log: { ok: boolean } };
    expect(report.dead_letters.total).toBe(2);
    expect(report.log.ok).toBe(true);

    // the store is a projection of the log: without it, passk rebuild brings the letters back from the DLQ
    rmSync(join(data, 'store'), { recursive: true, force: true });
    const rebuilt = await passk(['--data-dir', data, 'rebuild']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const after = JSON.parse((await passk(['--data-dir', data, 'check', '--json'])).stdout) as {
      dead_letters: { total: number; by_stage: Record<string, number> };
    };
    expect(after.dead_letters).toMatchObject({ total: 2, by_stage: { ingest: 2 } });
  });
});
