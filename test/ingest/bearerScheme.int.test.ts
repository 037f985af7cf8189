import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngestServer, type IngestServer } from '../../producers/ingest/index.ts';
import { createMemoryPublisher } from '../../producers/sdk/memoryPublisher.ts';

/** RFC 7235: the auth scheme is case-insensitive; `Authorization: bearer …` was refused with 401. */
const TOKEN = 'bearer-scheme-token-0123456789';
const publisher = createMemoryPublisher();
let server: IngestServer;
beforeAll(async () => {
  server = await createIngestServer({ publisher, token: TOKEN, port: 0 });
});
afterAll(async () => server?.close());

const trace = (i: number) => ({
  trace_id: `t-${i}`,
  agent_version: 'v1',
  segment: 'default',
  input_fingerprint: `fp-${i}`,
  sampling: { policy: 'p', probability: 1 },
  payload: { input: 'mail jane.doe@example.com' },
});

describe('the ingest API’s bearer scheme', () => {
  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts "%s <token>"', async (scheme) => {
    const i = ['Bearer', 'bearer', 'BEARER', 'bEaReR'].indexOf(scheme);
    const res = await fetch(new URL('/api/v1/traces', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `${scheme} ${TOKEN}` },
      body: JSON.stringify([trace(i)]),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it('still refuses another scheme or token, and the traces it took were redacted', async () => {
    for (const authorization of [`Basic ${TOKEN}`, 'bearer nope'])
      expect(
        (
          await fetch(new URL('/api/v1/traces', server.url), {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization },
            body: JSON.stringify([trace(9)]),
          })
        ).status,
      ).toBe(401);
    expect(publisher.events).toHaveLength(4);
    expect(JSON.stringify(publisher.events)).not.toContain('jane.doe');
  });
});
