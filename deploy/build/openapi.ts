// `npm run openapi`: writes docs/openapi.json, the ingest API's OpenAPI 3.1 document (generated from the zod schemas).
import { writeFileSync } from 'node:fs';
import { ingestOpenApi } from '../../producers/ingest/openapi.ts';

writeFileSync(new URL('../../docs/openapi.json', import.meta.url), `${JSON.stringify(ingestOpenApi(), null, 2)}\n`);
