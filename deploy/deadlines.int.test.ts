import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createIngestServer } from '../producers/ingest/index.ts';
import { BackendUnavailable } from '../schemas/errors.ts';
import { createDashboardServer, createMemoryDashboardData } from '../web/index.ts';
import { loadConfig } from './config.ts';
import { openEventLog } from './eventLog.ts';
import { openStore } from './store.ts';

/**
 * Every network call has a deadline (docs/reliability.md): each test puts a real peer on loopback that accepts a
 * connection and then stalls — a broker, a ClickHouse server, or a client of passk's own HTTP servers — and shows
 * that passk gives up on it with a clear error (or closes the connection) instead of waiting forever.
 */
const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((c) => c()));
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'passk-deadlines-'));
  closers.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
};

/** A Kafka broker's port that accepts and never answers; counts the requests (size-prefixed frames) it got. */
const stallingBroker = async () => {
  const sockets: Socket[] = [];
  let requests = 0;
  const server = createTcpServer((s) => {
    sockets.push(s);
    let buf = Buffer.alloc(0);
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        buf = buf.subarray(4 + buf.readInt32BE(0));
        requests++;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => (sockets.forEach((s) => s.destroy()), server.close()));
  return { port: (server.address() as AddressInfo).port, requests: () => requests };
};

/** An HTTP peer that reads requests and never answers one. */
const stallingHttp = async () => {
  let requests = 0;
  const server: Server = createHttpServer(() => void requests++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => (server.closeAllConnections(), server.close()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
};

describe('deadlines on the outgoing calls', () => {
  it('a broker that accepts and never answers: opening the Kafka log fails with BackendUnavailable, not a hang', async () => {
    const broker = await stallingBroker();
    const d = dir();
    const config = loadConfig(
      {},
      {
        PASSK_BACKEND: 'kafka',
        KAFKA_BROKERS: `127.0.0.1:${broker.port}`,
        SCHEMA_REGISTRY_URL: 'http://127.0.0.1:9',
        KAFKA_REQUEST_TIMEOUT_MS: '300',
      },
      d,
    );
    expect(config.kafka).toMatchObject({ requestTimeoutMs: 300 });
    const failure = await openEventLog(config).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(BackendUnavailable);
    expect((failure as Error).message).toMatch(/^kafka: opening the event log: .*(timed out|timeout|not connected)/i);
    expect(broker.requests()).toBeGreaterThan(0); // it reached the peer, which never answered
  }, 60_000);

  it('a ClickHouse server that never answers: opening the store fails naming the timeout', async () => {
    const server = await stallingHttp();
    const config = loadConfig(
      {},
      { CLICKHOUSE_URL: server.url, CLICKHOUSE_REQUEST_TIMEOUT_MS: '300', PASSK_DATA_DIR: dir() },
      dir(),
    );
    expect(config.clickhouse.requestTimeoutMs).toBe(300);
    await expect(openStore(config)).rejects.toThrow(/timeout/i);
    expect(server.requests()).toBeGreaterThan(0);
  }, 60_000);
});

/** Opens a raw connection, writes `bytes`, and resolves with what the server sent before it closed the socket. */
const holdOpen = (port: number, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('data', (c: Buffer) => (got += c.toString()));
    s.on('error', reject);
    s.on('close', () => resolve(got));
    closers.push(() => s.destroy());
  });

const timeouts = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300 };
const GET = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n';

describe('deadlines on passk’s HTTP servers', () => {
  const ingest = async () => {
    const server = await createIngestServer({
      publisher: { publish: async () => {}, close: async () => {} } as never,
      token: 'x'.repeat(16),
      port: 0,
      timeouts,
    });
    closers.push(() => void server.close());
    return server.port;
  };

  // Node's own defaults (headers 60 s, request 300 s) would hold these connections past the tests' time limits
  it('ingest: a client that never finishes its headers is answered 408 and cut off', async () => {
    expect(await holdOpen(await ingest(), 'POST /v1/trials HTTP/1.1\r\nHost: x\r\n')).toMatch(/^HTTP\/1\.1 408/);
  }, 30_000);

  it('ingest: a client that sends headers and then only part of its body is answered 408 and cut off', async () => {
    const head =
      'POST /v1/trials HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    expect(await holdOpen(await ingest(), head + '[{"a":')).toMatch(/408/);
  }, 30_000);

  it('ingest: an idle kept-alive connection is closed after its request was answered', async () => {
    const got = await holdOpen(await ingest(), GET);
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got).toContain('{"ok":true,');
  }, 4_000); // Node's own keep-alive (5 s) would not close it within the test's time

  it('dashboard: a client that never finishes its headers is answered 408 and cut off', async () => {
    const server = await createDashboardServer({ data: createMemoryDashboardData([]).data, port: 0, timeouts });
    closers.push(() => void server.close());
    expect(await holdOpen(server.port, 'GET / HTTP/1.1\r\nHost: x\r\n')).toMatch(/^HTTP\/1\.1 408/);
  }, 30_000);
});

describe('the deadlines’ configuration', () => {
  it('has defaults chosen on purpose, each settable from the environment', () => {
    const d = loadConfig({}, { KAFKA_BROKERS: 'b:9092', SCHEMA_REGISTRY_URL: 'http://r' }, '/');
    expect(d.kafka).toMatchObject({ connectionTimeoutMs: 3_000, requestTimeoutMs: 30_000 });
    expect(d.http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000 });
    expect(d.clickhouse.requestTimeoutMs).toBe(60_000);
    const set = loadConfig(
      {},
      {
        KAFKA_BROKERS: 'b:9092',
        SCHEMA_REGISTRY_URL: 'http://r',
        KAFKA_CONNECTION_TIMEOUT_MS: '100',
        PASSK_HTTP_HEADERS_TIMEOUT_MS: '1000',
        PASSK_HTTP_REQUEST_TIMEOUT_MS: '2000',
        PASSK_HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000',
      },
      '/',
    );
    expect(set.kafka?.connectionTimeoutMs).toBe(100);
    expect(set.http).toEqual({ headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000 });
  });
});
