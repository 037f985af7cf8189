import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../deploy/config.ts';
import { openStore, type Store } from '../../deploy/store.ts';
import { LOCAL_QUERY_PATH, LOCAL_TOKEN_HEADER, startLocalApi, type LocalApi } from '../../sinks/clickhouse/localApi.ts';

/**
 * Issue #27: the store owner's read-only local API ran any SELECT, and ClickHouse's `readonly` allows table functions
 * in one: `SELECT * FROM file('…')` read any file the process could, `url()` fetched any address. Against the real
 * embedded store (chDB), each such query is refused with 400 and reads nothing; an ordinary query still answers.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-local-api-'));
const secret = join(dir, 'secret.txt');
const TOKEN = 'local-api-token-0123456789';
let store: Store;
let api: LocalApi;
beforeAll(async () => {
  writeFileSync(secret, 'the-secret-line\n');
  store = await openStore(loadConfig({ dataDir: join(dir, 'data') }, {}, dir));
  api = await startLocalApi({ client: store.client, token: TOKEN });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const query = async (q: string) => {
  const res = await fetch(new URL(LOCAL_QUERY_PATH, api.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', [LOCAL_TOKEN_HEADER]: TOKEN },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, text: await res.text() };
};

describe('the local API refuses table functions that read outside the store', () => {
  it.each([
    `SELECT * FROM file('${secret}', 'LineAsString')`,
    `SELECT * FROM FILE ('${secret}', 'LineAsString')`,
    `SELECT * FROM \`file\`('${secret}', 'LineAsString')`,
    `WITH x AS (SELECT * FROM file('${secret}', 'LineAsString')) SELECT * FROM x`,
    `SELECT * FROM url('http://127.0.0.1:1/x', 'LineAsString')`,
    `SELECT * FROM s3('http://127.0.0.1:1/bucket/x', 'LineAsString')`,
    `SELECT * FROM executable('cat ${secret}', 'LineAsString', 'x String')`,
  ])('%s', async (q) => {
    const r = await query(q);
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/reads outside the store/);
    expect(r.text).not.toContain('the-secret-line');
  });

  it('still answers an ordinary query', async () => {
    const r = await query('SELECT 1 AS one');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ rows: [{ one: 1 }] });
  });
});
