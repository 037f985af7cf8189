export {
  buildEvents,
  createIngestMetrics,
  createIngestRoutes,
  INGEST_KINDS,
  INGEST_PRODUCER,
  type IngestAnswer,
  type IngestKind,
  type IngestMetrics,
  type IngestOptions,
  type ItemResult,
} from './ingest.ts';
export { createIngestServer, httpServerOptions, queueOf, type HttpTimeouts, type IngestServer } from './server.ts';
export { ingestRegistry } from './metrics.ts';
export { ingestOpenApi } from './openapi.ts';
