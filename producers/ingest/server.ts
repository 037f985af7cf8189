import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIngestRoutes, type IngestOptions } from './ingest.ts';

export interface IngestServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The lean server of `passk ingest`: only the ingest API (and /healthz), for production hosts. */
export const createIngestServer = async (
  opts: IngestOptions & { host?: string; port?: number },
): Promise<IngestServer> => {
  const routes = createIngestRoutes(opts);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ingest');
    routes(req, res, url.pathname)
      .then((handled) => {
        if (handled) return;
        const health = url.pathname === '/healthz';
        res.writeHead(health ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(health ? { ok: true } : { error: 'not found' }));
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
