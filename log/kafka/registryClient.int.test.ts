import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
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

describe('schema-registry client schemas', () => {
  interface Registered {
    isValid(payload: object, opts?: { errorHook: (path: string[], message: unknown) => void }): boolean;
  }
  /** Registers `schema` as a first registration (no config yet, then the new id), and reads it back from the client. */
  const registerFirst = async (schema: object): Promise<{ id: number; registered: () => Promise<Registered> }> => {
    const r = await registry((_n, req, res) =>
      req.method === 'GET'
        ? json(res, 404, { error_code: 40401, message: 'Subject not found' })
        : json(res, 200, { id: 5, compatibility: 'BACKWARD' }),
    );
    const client = createRegistryClient({ url: r.url, timeoutMs: 2_000 });
    const { id } = await client.register({ type: SchemaType.JSON, schema: JSON.stringify(schema) }, { subject: 's' });
    return { id, registered: async () => (await client.getSchema(id)) as unknown as Registered };
  };

  it('compiles a registered schema at its first validation, not at register', async () => {
    // a schema ajv cannot compile: registering it asks the registry alone
    const { id, registered } = await registerFirst({ type: 'object', properties: { a: { type: 'no-such-type' } } });
    expect(id).toBe(5);
    const schema = await registered();
    expect(() => schema.isValid({ a: 1 })).toThrow(/schema is invalid: .*properties\/a\/type/);
  });

  it('a compiled schema refuses what it should, with the library validator’s words', async () => {
    const { registered } = await registerFirst({
      type: 'object',
      properties: { a: { type: ['string', 'number'] } },
      required: ['a'],
    });
    const schema = await registered();
    expect(schema.isValid({ a: 'x' })).toBe(true);
    expect(schema.isValid({ a: 2 })).toBe(true);
    const problems: string[] = [];
    expect(
      schema.isValid({ a: true }, { errorHook: (path, m) => problems.push(`${path.join('.')}: ${String(m)}`) }),
    ).toBe(false);
    expect(problems).toEqual(['/a: should be string,number']);
  });
});

describe('schema-registry client modules', () => {
  /** A registry that takes every registration (no config yet, then id 1, 2, …) and holds id 1 as a JSON Schema. */
  const accepting = () => {
    let id = 0;
    return registry((_n, req, res) => {
      if (req.method === 'GET' && req.url?.startsWith('/config/'))
        return json(res, 404, { error_code: 40401, message: 'Subject not found' });
      if (req.method === 'GET' && req.url === '/schemas/ids/1')
        return json(res, 200, { schema: '{"type":"object"}', schemaType: 'JSON' });
      if (req.method === 'GET' && req.url === '/schemas/ids/9')
        return json(res, 200, {
          schema: JSON.stringify({ type: 'record', name: 'r', fields: [{ name: 'n', type: 'int' }] }),
        });
      if (req.method === 'PUT') return json(res, 200, { compatibility: 'BACKWARD' });
      return json(res, 200, { id: ++id });
    });
  };

  it('registering every event type and reading a JSON Schema back loads neither avsc, protobufjs nor ajv 7', async () => {
    // in a process of its own: what the library's index would load (avsc, protobufjs and its ajv 7 at its load, 0.2 s
    // of CPU at each start of a Kafka `passk process`) is read from its module cache
    const r = await accepting();
    const here = new URL('.', import.meta.url).href;
    const script = `
      const { createRegistryClient } = await import(${JSON.stringify(`${here}registryClient.ts`)});
      const { createRegistryCodec } = await import(${JSON.stringify(`${here}registryCodec.ts`)});
      const registry = createRegistryClient({ url: ${JSON.stringify(r.url)}, timeoutMs: 2000 });
      const codec = await createRegistryCodec({ registry });
      const schema = await registry.getSchema(1);
      const { createRequire } = await import('node:module');
      console.log(JSON.stringify({ ids: codec.ids.size, valid: typeof schema.isValid === "function", loaded: Object.keys(createRequire(import.meta.url).cache) }));
    `;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: fileURLToPath(new URL('../../', import.meta.url)), env: { ...process.env, NODE_OPTIONS: '' } },
        (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout)),
      ),
    );
    const { ids, valid, loaded } = JSON.parse(out.trim().split('\n').at(-1)!) as {
      ids: number;
      valid: boolean;
      loaded: string[];
    };
    expect(ids).toBeGreaterThan(5);
    expect(valid).toBe(true);
    expect(loaded.some((m) => m.includes('/mappersmith/'))).toBe(true); // the library's HTTP client did the requests
    expect(
      loaded.filter((m) =>
        /\/node_modules\/(avsc|protobufjs)\/|confluent-schema-registry\/node_modules\/ajv\//.test(m),
      ),
    ).toEqual([]);
  });

  it('a schema id of another type (Avro) is read by the library’s own client, as before', async () => {
    const r = await accepting();
    const client = createRegistryClient({ url: r.url, timeoutMs: 2_000 });
    const avro = (await client.getSchema(9)) as unknown as { isValid(v: unknown): boolean };
    expect(avro.isValid({ n: 1 })).toBe(true);
    expect(avro.isValid({ n: 'x' })).toBe(false);
  });
});
