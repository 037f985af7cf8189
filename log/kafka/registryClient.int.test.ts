import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistryClient } from './registryClient.ts';
import { createRegistryCodec } from './registryCodec.ts';
import { BackendUnavailable } from '../../schemas/errors.ts';

/** A real HTTP server on loopback whose handler decides, per request, to answer or to stall (never answer). */
const servers: ReturnType<typeof createServer>[] = [];
const registry = async (handle: (n: number, req: IncomingMessage, res: ServerResponse) => void) => {
  let n = 0;
  const server = createServer((req, res) => handle(++n, req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => n };
};
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});
const stall = () => {};
const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/vnd.schemaregistry.v1+json' }).end(JSON.stringify(body));

describe('schema-registry client deadlines', () => {
  it('abandons a request the registry never answers, retries it 3 times, then fails naming the timeout', async () => {
    const r = await registry(stall);
    const client = createRegistryClient({ url: r.url, timeoutMs: 200 });
    await expect(client.getLatestSchemaId('passk.trials-value')).rejects.toThrow(/Timeout \(200ms\)/);
    expect(r.requests()).toBe(4);
  });

  it('a registry that stalls twice and then answers is read on the third try', async () => {
    const r = await registry((n, _req, res) =>
      n <= 2 ? stall() : json(res, 200, { id: 7, version: 1, schema: '{}' }),
    );
    const client = createRegistryClient({ url: r.url, timeoutMs: 200 });
    await expect(client.getLatestSchemaId('passk.trials-value')).resolves.toBe(7);
    expect(r.requests()).toBe(3);
  });

  it('retries a 5xx, but takes a 4xx answer as the registry’s word (no retry)', async () => {
    const five = await registry((n, _req, res) =>
      n === 1 ? json(res, 503, { message: 'busy' }) : json(res, 200, { id: 3, version: 1, schema: '{}' }),
    );
    await expect(createRegistryClient({ url: five.url, timeoutMs: 200 }).getLatestSchemaId('s')).resolves.toBe(3);
    expect(five.requests()).toBe(2);
    const four = await registry((_n, _req, res) => json(res, 404, { error_code: 40401, message: 'Subject not found' }));
    await expect(createRegistryClient({ url: four.url, timeoutMs: 200 }).getLatestSchemaId('s')).rejects.toThrow(
      /Subject not found/,
    );
    expect(four.requests()).toBe(1);
  });

  it('a producer whose registry stalls gets BackendUnavailable naming the subject, not a hang', async () => {
    const r = await registry(stall);
    const client = createRegistryClient({ url: r.url, timeoutMs: 200 });
    const failure = await createRegistryCodec({ registry: client, subjectPrefix: 't.' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(BackendUnavailable);
    expect((failure as Error).message).toMatch(
      /schema registry: registering t\.passk\.[A-Za-z-]+: .*Timeout \(200ms\)/,
    );
  });
});
