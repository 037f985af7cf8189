export {
  buildEvents,
  createIngestRoutes,
  INGEST_KINDS,
  INGEST_PRODUCER,
  type IngestAnswer,
  type IngestKind,
  type IngestOptions,
  type ItemResult,
} from './ingest.ts';
export { createIngestServer, httpServerOptions, type HttpTimeouts, type IngestServer } from './server.ts';
export { ingestOpenApi } from './openapi.ts';
