import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Querier } from './queries/select.ts';

/**
 * The local HTTP API of the process that holds the embedded store (chDB locks its directory, so
 * one process owns it). Other passk commands on the same machine send it their read queries:
 * `POST /api/local/query {query, query_params}` → `{rows}`. Loopback only, a token per process
 * (from the owner file, readable by the user alone), and read-only: SELECT/WITH only, run with
 * ClickHouse's `readonly` setting.
 */
export interface LocalApi {
  readonly url: string;
  close(): Promise<void>;
}

export const LOCAL_QUERY_PATH = '/api/local/query';
export const LOCAL_TOKEN_HEADER = 'x-passk-local-token';
const MAX_BODY = 1_000_000;

/** A request's body as text, refused beyond `max` bytes. */
export const readBody = async (req: IncomingMessage, max = MAX_BODY): Promise<string> => {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) throw new Error('request too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * ClickHouse's table functions that read (or run) something outside the store: files, URLs, object stores, other
 * databases and servers, programs. ClickHouse's `readonly` setting allows them in a SELECT, so the local API refuses
 * any query that names one (quoted or not, in any case), before it reaches the engine.
 */
const OUTSIDE = new RegExp(
  `[\`"]?\\b(?:${[
    'file',
    'fileCluster',
    'url',
    'urlCluster',
    's3',
    's3Cluster',
    'gcs',
    'oss',
    'cosn',
    'azureBlobStorage',
    'azureBlobStorageCluster',
    'hdfs',
    'hdfsCluster',
    'remote',
    'remoteSecure',
    'cluster',
    'clusterAllReplicas',
    'mysql',
    'postgresql',
    'mongodb',
    'redis',
    'jdbc',
    'odbc',
    'sqlite',
    'executable',
    'input',
    'deltaLake',
    'deltaLakeCluster',
    'hudi',
    'hudiCluster',
    'iceberg',
    'icebergS3',
    'icebergAzure',
    'icebergHDFS',
    'icebergLocal',
    'icebergCluster',
    'paimon',
    'ytsaurus',
    'fuzzJSON',
    'fuzzQuery',
    'dictionary',
    'loop',
    'merge',
    'arrowFlight',
    'python',
  ].join('|')})[\`"]?\\s*\\(`,
  'i',
);
export const namesOutsideSource = (query: string): string | undefined =>
  OUTSIDE.exec(query)?.[0].replace(/[\s(`"]/g, '');

const sameToken = (a: string | undefined, b: string): boolean =>
  a !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export const startLocalApi = async (opts: { client: Querier; token: string; port?: number }): Promise<LocalApi> => {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const header = req.headers[LOCAL_TOKEN_HEADER];
    if (!sameToken(typeof header === 'string' ? header : undefined, opts.token))
      return send(401, { error: 'a valid local token is required' });
    if (req.method === 'GET' && req.url === '/api/local/health') return send(200, { ok: true, pid: process.pid });
    if (req.method !== 'POST' || req.url !== LOCAL_QUERY_PATH) return send(404, { error: 'not found' });
    readBody(req)
      .then(async (text) => {
        const body = JSON.parse(text) as { query?: unknown; query_params?: unknown };
        if (typeof body.query !== 'string' || !/^\s*(SELECT|WITH)\b/i.test(body.query) || body.query.includes(';'))
          return send(400, { error: 'only one SELECT query' });
        const outside = namesOutsideSource(body.query);
        if (outside !== undefined)
          return send(400, { error: `the table function ${outside}() reads outside the store: refused` });
        const rs = await opts.client.query({
          query: body.query,
          query_params: (body.query_params ?? {}) as Record<string, unknown>,
          format: 'JSONEachRow',
          clickhouse_settings: { readonly: '2' },
        });
        send(200, { rows: await rs.json() });
      })
      .catch((e: unknown) => send(500, { error: e instanceof Error ? e.message : String(e) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/** A Querier that sends its queries to the owning process's local API (what `select` needs, nothing more). */
export const localApiQuerier = (url: string, token: string): Querier =>
  ({
    query: async (p: { query: string; query_params?: Record<string, unknown> }) => {
      const res = await fetch(new URL(LOCAL_QUERY_PATH, url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', [LOCAL_TOKEN_HEADER]: token },
        body: JSON.stringify({ query: p.query, query_params: p.query_params ?? {} }),
      });
      const body = (await res.json()) as { rows?: unknown[]; error?: string };
      if (!res.ok || !body.rows)
        throw new Error(`the store's owner at ${url} answered ${res.status}: ${body.error ?? ''}`);
      const rows = body.rows;
      return { json: async () => rows };
    },
  }) as unknown as Querier;
