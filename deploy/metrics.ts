/**
 * `GET /metrics` (Prometheus text format) of `passk serve` and `passk process`: what the processors did (records,
 * trials, decisions, dead letters) and their consumers' lag, beside the ingest server's own when it is mounted.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ProcessorStats } from './processors.ts';

/** Registers the processors' metrics, read from `stats` at each scrape. */
export const processorRegistry = (stats: () => Promise<ProcessorStats>, registry = new Registry()): Registry => {
  const counter = (name: string, help: string, key: keyof ProcessorStats) =>
    new Counter({
      name,
      help,
      registers: [registry],
      async collect() {
        this.reset();
        this.inc((await stats())[key]);
      },
    });
  counter('passk_processor_records_total', 'Records the processors read', 'records');
  counter('passk_processor_trials_total', 'Trials folded into row state', 'trials');
  counter('passk_processor_decisions_total', 'Gate, dataset and window events the processors emitted', 'decisions');
  counter('passk_dead_letters_total', 'Records dead-lettered (undecodable or failing their schema)', 'deadLetters');
  new Gauge({
    name: 'passk_consumer_lag',
    help: 'Records published and not yet processed, over every consumer partition',
    registers: [registry],
    async collect() {
      this.set((await stats()).lag);
    },
  });
  return registry;
};

/** Answers `GET /metrics` from the registry; false for any other path. */
export const metricsRoute =
  (registry: Registry) =>
  async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    if (pathname !== '/metrics') return false;
    const body = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };

/** A server of `/metrics` alone (`passk process --metrics-port`). */
export const startMetricsServer = async (opts: {
  registry: Registry;
  host: string;
  port: number;
}): Promise<{ url: string; close: () => Promise<void> }> => {
  collectDefaultMetrics({ register: opts.registry });
  const route = metricsRoute(opts.registry);
  const server = createServer((req, res) => {
    route(req, res, new URL(req.url ?? '/', 'http://metrics').pathname)
      .then((handled) => {
        if (handled) return;
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('GET /metrics\n');
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
