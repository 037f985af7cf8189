/**
 * `GET /metrics` of the ingest server (and of `passk serve`, which mounts the ingest routes), in the Prometheus text
 * format: what was accepted and refused (by endpoint, outcome and reason), the OTLP receiver's held spans and
 * evictions, the requests being read and written (the queue), and the time spent preparing (redacting) traces.
 * Every value is read from the counters when Prometheus scrapes; nothing is computed per request.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { IngestMetrics } from './ingest.ts';

/** A counter whose value is a running total kept elsewhere, read at scrape time. */
const total = (
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly string[],
  read: () => Iterable<[Record<string, string>, number]>,
) =>
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, v] of read()) if (v > 0) this.inc(labels, v);
    },
  });

const gauge = (registry: Registry, name: string, help: string, read: () => number) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });

const split = (m: Map<string, number>, a: string, b: string) =>
  [...m].map(([key, v]) => {
    const [x, y] = key.split('|') as [string, string];
    return [{ [a]: x, [b]: y }, v] as [Record<string, string>, number];
  });

/** Registers the ingest server's metrics (and the process's own: heap, CPU, event-loop lag) on a new registry. */
export const ingestRegistry = (m: IngestMetrics, registry = new Registry()): Registry => {
  collectDefaultMetrics({ register: registry });
  total(
    registry,
    'passk_ingest_items_total',
    'Items of /api/v1 requests, by kind and outcome',
    ['kind', 'outcome'],
    () => split(m.items, 'kind', 'outcome'),
  );
  total(
    registry,
    'passk_ingest_requests_total',
    'Answered requests, by endpoint and HTTP status',
    ['endpoint', 'code'],
    () => split(m.requests, 'endpoint', 'code'),
  );
  gauge(registry, 'passk_ingest_in_flight', 'Requests being written to the event log', () => m.inFlight);
  gauge(registry, 'passk_ingest_reading', 'Requests whose body is being read', () => m.reading);
  const r = () => m.receiver;
  total(registry, 'passk_otlp_spans_total', 'Spans received at /v1/traces', [], () => [[{}, r()?.stats.spans ?? 0]]);
  total(registry, 'passk_otlp_log_records_total', 'Log records received at /v1/logs', [], () => [
    [{}, r()?.stats.logRecords ?? 0],
  ]);
  total(
    registry,
    'passk_otlp_traces_total',
    'Traces made of spans, by record (first, or a later revision)',
    ['record'],
    () => [
      [{ record: 'first' }, r()?.stats.traces ?? 0],
      [{ record: 'revision' }, r()?.stats.revisions ?? 0],
    ],
  );
  total(
    registry,
    'passk_otlp_kept_total',
    'Traces kept by the sampling policy at once (not those of a capped window)',
    [],
    () => [[{}, r()?.stats.kept ?? 0]],
  );
  total(registry, 'passk_otlp_duplicates_total', 'Re-sent spans that changed nothing', [], () => [
    [{}, r()?.stats.duplicates ?? 0],
  ]);
  total(registry, 'passk_otlp_rejected_total', 'Spans and log records refused or evicted, by reason', ['reason'], () =>
    Object.entries(r()?.stats.rejected ?? {}).map(([reason, v]) => [{ reason }, v] as [Record<string, string>, number]),
  );
  total(
    registry,
    'passk_otlp_dead_letters_total',
    'Dead letters written to passk.dlq for refused or evicted spans and log records (a re-sent one once)',
    [],
    () => [[{}, r()?.stats.deadLetters ?? 0]],
  );
  gauge(
    registry,
    'passk_otlp_held_bytes',
    'Bytes of spans held (waiting for their root, or in their late window)',
    () => r()?.assembly.heldBytes ?? 0,
  );
  gauge(
    registry,
    'passk_otlp_held_traces',
    'Traces whose spans wait for their root',
    () => r()?.assembly.heldTraces ?? 0,
  );
  total(registry, 'passk_otlp_prepare_seconds_total', 'Time spent sampling and redacting traces', [], () => [
    [{}, (r()?.stats.prepareMs ?? 0) / 1000],
  ]);
  return registry;
};
