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
export { createIngestServer, queueOf, type HttpTimeouts, type IngestServer } from './server.ts';
export { httpServerOptions } from '../../schemas/httpServer.ts';
export { ingestRegistry } from './metrics.ts';
export { ingestOpenApi } from './openapi.ts';
