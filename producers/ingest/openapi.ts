import { z } from 'zod';
import { FlatTrial } from '../../schemas/trialFile.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { STRICT } from '../sdk/inputs.ts';
import { DatasetRow } from '../runner/dataset.ts';

/** The SDK's input shape of an event: the strict schema without the envelope the recorder fills in. */
const input = (s: z.ZodObject) =>
  s
    .omit({ type: true, schema_version: true, producer: true, event_id: true, occurred_at: true })
    .extend({ event_id: z.string().optional(), occurred_at: z.number().int().optional() });

const json = (s: z.ZodType) => {
  const { $schema: _, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'input' }) as Record<
    string,
    unknown
  >;
  return rest;
};

const BODIES = {
  trials: ['FlatTrial', FlatTrial],
  traces: ['TraceInput', input(STRICT.TraceSampled)],
  judgments: ['JudgmentInput', input(STRICT.JudgmentRecorded)],
  labels: ['LabelInput', input(STRICT.LabelRecorded)],
  'datasets/{id}/rows': ['DatasetRow', DatasetRow],
} as const;

const ANSWER = {
  type: 'object',
  required: ['accepted', 'duplicates', 'rejected', 'items'],
  properties: {
    accepted: { type: 'integer' },
    duplicates: { type: 'integer' },
    rejected: { type: 'integer' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'status'],
        properties: {
          index: { type: 'integer', description: 'array index (JSON) or 0-based line (NDJSON)' },
          status: { enum: ['accepted', 'duplicate', 'rejected'] },
          event_id: { type: 'string' },
          field: { type: 'string' },
          reason: { type: 'string' },
        },
      },
    },
  },
};

/** The OpenAPI 3.1 document of the ingest API, generated from the same zod schemas the server validates with. */
export const ingestOpenApi = (): Record<string, unknown> => {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  const paths: Record<string, unknown> = {};
  for (const [kind, [name]] of Object.entries(BODIES)) {
    const ref = { $ref: `#/components/schemas/${name}` };
    const rows = kind === 'datasets/{id}/rows';
    paths[`/api/v1/${kind}`] = {
      post: {
        operationId: rows ? 'ingest_dataset_rows' : `ingest_${kind}`,
        summary: rows
          ? 'Add rows to a dataset version (as passk dataset publish): a JSON array (or one object), or NDJSON; gzip bodies accepted'
          : `Record ${kind}: a JSON array (or one object), or NDJSON; gzip bodies accepted`,
        security: [{ writeToken: [] }],
        ...(rows
          ? {
              description:
                'Each row becomes a DatasetRowUpserted of dataset {id} at version V. A version is immutable: a row id sent again to the same version is a duplicate, whatever its content; send changed rows under a new version.',
              parameters: [
                { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 512 } },
                {
                  name: 'version',
                  in: 'query',
                  required: true,
                  description: 'the dataset version the rows belong to',
                  schema: { type: 'string', minLength: 1, maxLength: 512 },
                },
              ],
            }
          : {}),
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { oneOf: [ref, { type: 'array', items: ref }] } },
            'application/x-ndjson': { schema: ref, description: 'one item per line' },
          },
        },
        responses: {
          '200': {
            description: 'every item accepted or a duplicate; durable',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/IngestAnswer' } } },
          },
          '207': {
            description: 'some items rejected; the others durable',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/IngestAnswer' } } },
          },
          '400': {
            description: 'no item valid, or the body is not JSON/NDJSON',
            content: {
              'application/json': {
                schema: {
                  oneOf: [{ $ref: '#/components/schemas/IngestAnswer' }, { $ref: '#/components/schemas/Error' }],
                },
              },
            },
          },
          '401': error('no valid write token'),
          '413': error('the body or an event is too large'),
          '415': error('unsupported Content-Type or Content-Encoding'),
          '429': error('too many writes at once; retry after Retry-After seconds'),
          '503': error('the event log is unavailable; retry after Retry-After seconds'),
        },
      },
    };
  }
  paths['/v1/traces'] = {
    post: {
      operationId: 'otlp_traces',
      summary:
        'OTLP/HTTP trace export (ExportTraceServiceRequest, protobuf or JSON): GenAI spans become sampled, redacted TraceSampled events',
      description:
        "The OpenTelemetry protocol's own path, so an OTLP exporter pointed at the server's base URL works. Bodies and answers are the protocol's messages (opentelemetry/proto/collector/trace/v1/trace_service.proto); docs/producers.md lists the attributes read. Answered once the kept traces are durable.",
      security: [{ writeToken: [] }],
      requestBody: {
        required: true,
        content: {
          'application/x-protobuf': { schema: { type: 'string', contentMediaType: 'application/x-protobuf' } },
          'application/json': { schema: { type: 'object', description: 'OTLP/JSON ExportTraceServiceRequest' } },
        },
      },
      responses: {
        '200': {
          description:
            'ExportTraceServiceResponse: empty, or partialSuccess with rejectedSpans and errorMessage for spans that make no trace',
          content: {
            'application/x-protobuf': { schema: { type: 'string', contentMediaType: 'application/x-protobuf' } },
            'application/json': { schema: { $ref: '#/components/schemas/ExportTraceServiceResponse' } },
          },
        },
        ...Object.fromEntries(
          (
            [
              ['400', 'the body is not an ExportTraceServiceRequest'],
              ['401', 'no valid write token'],
              ['413', 'the body is too large'],
              ['415', 'Content-Type is neither application/x-protobuf nor application/json'],
              ['429', 'too many writes at once; retry after Retry-After seconds'],
              ['503', 'the event log is unavailable; retry after Retry-After seconds'],
            ] as const
          ).map(([code, description]) => [
            code,
            {
              description: `${description} (a google.rpc.Status, in the request's encoding)`,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/RpcStatus' } } },
            },
          ]),
        ),
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'passk ingest API', version: PRODUCER_VERSION },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      securitySchemes: { writeToken: { type: 'http', scheme: 'bearer', description: 'PASSK_INGEST_TOKEN' } },
      schemas: {
        ...Object.fromEntries(Object.values(BODIES).map(([name, s]) => [name, json(s)])),
        IngestAnswer: ANSWER,
        Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
        ExportTraceServiceResponse: {
          type: 'object',
          properties: {
            partialSuccess: {
              type: 'object',
              properties: {
                rejectedSpans: { type: ['string', 'integer'], description: 'int64' },
                errorMessage: { type: 'string' },
              },
            },
          },
        },
        RpcStatus: {
          type: 'object',
          properties: { code: { type: 'integer' }, message: { type: 'string' } },
        },
      },
    },
  };
};
