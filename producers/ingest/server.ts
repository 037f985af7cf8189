import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIngestRoutes, type IngestMetrics, type IngestOptions } from './ingest.ts';
import { ingestRegistry } from './metrics.ts';
import { httpServerOptions, type HttpTimeouts } from '../../schemas/httpServer.ts';

export type { HttpTimeouts };

export interface IngestServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** What `/healthz` says of the receiver's queue: requests being read and written, spans held. */
export const queueOf = (m: IngestMetrics) => ({
  reading: m.reading,
  in_flight: m.inFlight,
  held_traces: m.receiver?.assembly.heldTraces ?? 0,
  held_bytes: m.receiver?.assembly.heldBytes ?? 0,
});

/** The lean server of `passk ingest`: only the ingest API (and /healthz), for production hosts. */
export const createIngestServer = async (
  opts: IngestOptions & { host?: string; port?: number; timeouts?: HttpTimeouts },
): Promise<IngestServer> => {
  const routes = createIngestRoutes(opts);
  const registry = ingestRegistry(routes.metrics);
  const server = createServer(httpServerOptions(opts.timeouts), (req, res) => {
    const url = new URL(req.url ?? '/', 'http://ingest');
    routes(req, res, url.pathname)
      .then(async (handled) => {
        if (handled) return;
        if (url.pathname === '/metrics') {
          const body = await registry.metrics();
          res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
          return void res.end(body);
        }
        const health = url.pathname === '/healthz';
        res.writeHead(health ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(health ? { ok: true, queue: queueOf(routes.metrics) } : { error: 'not found' }));
      })
      .catch((e: unknown) => {
        (opts.onError ?? (() => undefined))(e);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 7358, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${port}/`,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await routes.close();
    },
  };
};
