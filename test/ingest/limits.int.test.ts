import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { EventLog } from '../../processors/ports.ts';
import { createIngestServer, type IngestAnswer, type IngestServer } from '../../producers/ingest/index.ts';

/**
 * The ingest server's limits hold item by item: an item the log refuses (a lone surrogate, an event over the size
 * limit) is one rejection with its index and reason, never a whole-batch failure; a request of too many items is
 * refused before any work; a slow upload holds no write slot; a gzip body refused as too large leaves its kept-alive
 * connection usable; an OTLP export of RAG-sized prompts far over 16 MiB lands.
 */
const TOKEN = 'limits-token-0123456789abc';
const dir = mkdtempSync(join(tmpdir(), 'passk-limits-'));
let log: EventLog;
let server: IngestServer;

beforeAll(async () => {
  log = await createEmbeddedEventLog({ dataDir: dir });
  server = await createIngestServer({
    publisher: log.publisher,
    token: TOKEN,
    port: 0,
    maxBodyBytes: 4 << 20,
    maxItems: 200,
    maxInFlight: 1,
  });
});
afterAll(async () => {
  await server.close();
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

const onDisk = (topic: string): number => {
  const db = new Database(join(dir, 'log.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM records WHERE topic = ?').get(topic) as { n: number }).n;
  } finally {
    db.close();
  }
};
const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(new URL(path, server.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson', ...headers },
    body,
  });
/** 100 KB of retrieved context, as a RAG prompt carries. */
const RAG = 'the refund policy says items may be returned within thirty days '.repeat(1_600);
const trial = (suite: string, i: number, more: object = {}) =>
  JSON.stringify({
    suite,
    dataset_version: 'v1',
    row_id: `r${i}`,
    agent_version: 'a1',
    run_id: 'run-1',
    attempt: 0,
    passed: true,
    ...more,
  });

describe('ingest limits, item by item', () => {
  it('rejects the one item with a lone surrogate (207, its index), and writes the other 99', async () => {
    const before = onDisk('passk.trials');
    const lines = Array.from({ length: 100 }, (_, i) => trial('surrogate', i));
    lines[42] = trial('surrogate', 42, { output: 'broken \ud800 text' }); // JSON.stringify writes it as \ud800
    const res = await post('/api/v1/trials', lines.join('\n'));
    const answer = (await res.json()) as IngestAnswer;
    expect(res.status).toBe(207);
    expect(answer).toMatchObject({ accepted: 99, rejected: 1 });
    expect(answer.items.find((i) => i.status === 'rejected')).toMatchObject({ index: 42, reason: expect.any(String) });
    expect(onDisk('passk.trials') - before).toBe(99);
  });

  it('rejects the one event over the size limit, and writes the rest', async () => {
    const before = onDisk('passk.trials');
    const lines = Array.from({ length: 10 }, (_, i) => trial('big', i));
    lines[3] = trial('big', 3, { output: 'x'.repeat(1_200_000) });
    const res = await post('/api/v1/trials', lines.join('\n'));
    const answer = (await res.json()) as IngestAnswer;
    expect(res.status).toBe(207);
    expect(answer.items[3]).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/exceeds the maximum/) });
    expect(answer.accepted).toBe(9);
    expect(onDisk('passk.trials') - before).toBe(9);
  });

  it('refuses a request of more items than the cap before doing anything', async () => {
    const before = onDisk('passk.trials');
    const res = await post('/api/v1/trials', Array.from({ length: 201 }, (_, i) => trial('many', i)).join('\n'));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toMatch(/limit is 200 per request/);
    expect(onDisk('passk.trials')).toBe(before);
  });

  it('gives no write slot to an upload still sending its body', async () => {
    // One slot (maxInFlight 1), taken by nobody while a slow client trickles its body.
    const slow = connect(server.port, '127.0.0.1');
    await new Promise((r) => slow.once('connect', r));
    slow.write(
      `POST /api/v1/trials HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n` +
        'content-type: application/x-ndjson\r\ncontent-length: 100000\r\n\r\n{"suite":',
    );
    await new Promise((r) => setTimeout(r, 200));
    const res = await post('/api/v1/trials', trial('slot', 1));
    expect(res.status).toBe(200);
    slow.destroy();
  });

  it('bounds the bytes of bodies being read at once (503, Retry-After), and frees them when an upload goes away', async () => {
    const small = await createIngestServer({
      publisher: log.publisher,
      token: TOKEN,
      port: 0,
      maxReadingBytes: 1 << 20,
    });
    try {
      const slow = connect(small.port, '127.0.0.1');
      slow.on('error', () => undefined); // reset by the server when it is answered 503 mid-upload: expected
      await new Promise((r) => slow.once('connect', r));
      slow.write(
        `POST /api/v1/trials HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n` +
          `content-type: application/x-ndjson\r\ncontent-length: ${4 << 20}\r\n\r\n${' '.repeat(800_000)}`,
      );
      await new Promise((r) => setTimeout(r, 300));
      const body = `${' '.repeat(400_000)}\n${trial('budget', 1)}`;
      const send = () =>
        fetch(new URL('/api/v1/trials', small.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
          body,
        });
      const refused = await send();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      await refused.arrayBuffer();
      slow.destroy();
      await new Promise((r) => setTimeout(r, 300));
      expect((await send()).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('keeps a kept-alive connection usable after a gzip body refused as too large', async () => {
    // ~8 MiB of gzip (base64 of random bytes barely compresses): over the 4 MiB limit after gunzip, with megabytes of
    // the body not yet read when the server answers 413. Then a second request on the same connection.
    const bomb = gzipSync(randomBytes(8 << 20).toString('base64'));
    const head = (length: number, gzip: boolean) =>
      `POST /api/v1/trials HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n` +
      `content-type: application/x-ndjson\r\n${gzip ? 'content-encoding: gzip\r\n' : ''}content-length: ${length}\r\n\r\n`;
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
    const answered = (status: number, n: number) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if ((got.match(/^HTTP\/1\.1 \d+/gm) ?? []).length >= n) return resolve();
          if (socket.destroyed) return reject(new Error(`the connection closed before answer ${n} (${status})`));
          setTimeout(check, 20);
        };
        check();
      });
    socket.write(head(bomb.length, true));
    socket.write(bomb);
    await answered(413, 1);
    const second = trial('keepalive', 1);
    socket.write(head(Buffer.byteLength(second), false) + second);
    // Old code never read the rest of the first body, so this second request was never parsed: no answer.
    await Promise.race([
      answered(200, 2),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no answer on the kept-alive connection')), 10_000)),
    ]);
    expect(got.match(/^HTTP\/1\.1 \d+/gm)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
    socket.destroy();
  });

  it('takes an OTLP export of 200 traces with 100 KB prompts (20 MB, over the old 16 MiB limit)', async () => {
    const before = onDisk('passk.traces');
    const spans = Array.from({ length: 200 }, (_, i) => ({
      traceId: (i + 1).toString(16).padStart(32, '0'),
      spanId: (i + 1).toString(16).padStart(16, '0'),
      name: 'chat',
      endTimeUnixNano: '1767225600000000000',
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
        {
          key: 'gen_ai.input.messages',
          value: { stringValue: JSON.stringify([{ role: 'user', content: `order ${i}: ${RAG}` }]) },
        },
      ],
    }));
    const body = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
    expect(body.length).toBeGreaterThan(16 << 20);
    const res = await post('/v1/traces', body, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(onDisk('passk.traces') - before).toBe(200);
  });
});
