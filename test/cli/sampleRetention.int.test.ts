import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claimStoreOwner, newLocalToken } from '../../deploy/storeOwner.ts';
import { openClickHouse } from '../../sinks/clickhouse/index.ts';
import { startLocalApi } from '../../sinks/clickhouse/localApi.ts';
import { statusFileLock } from '../../sinks/clickhouse/statusLock.ts';
import { passk } from '../browser/processes.ts';

/**
 * `passk sample`'s warning about kept traces older than the trace retention names the store's own retention, as
 * `passk migrate --trace-ttl-days N` set it (issue 32, item 4). It said 90 days whatever the store had: sample reads
 * the event log, not the store. Now it reads the store's TTL (through the local API of the process that owns the
 * embedded store, else by opening it when nobody holds it), and when that cannot be known it says "the store's
 * retention (90 days unless changed)". Real chDB; the CLI as a child; the store's server variables cleared, so the
 * embedded store is the one read.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-sample-ttl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;
const file = join(dir, 'old.jsonl');
// kept traces dated 200, 60 and 40 days back, and one without occurred_at (dated when sampled)
writeFileSync(
  file,
  [...[200, 60, 40].map((d, i) => ({ trace_id: `o${i}`, occurred_at: Date.now() - d * DAY })), { trace_id: 'n1' }]
    .map((t) => JSON.stringify({ ...t, agent_version: 'v1', input: `q ${t.trace_id}`, output: 'a' }))
    .join('\n') + '\n',
);

const cli = async (data: string, ...args: string[]) => {
  const r = await passk(['--data-dir', data, ...args], {
    env: { NO_COLOR: '1', CLICKHOUSE_URL: undefined, CLICKHOUSE_DATABASE: undefined, PASSK_BACKEND: undefined },
    timeoutMs: 200_000,
  });
  expect(r.code, r.stderr).toBe(0);
  return r;
};
/** The warning's text on one line, and the JSON report's `beyondRetention`. */
const sample = async (data: string) => {
  const text = (await cli(data, 'sample', file, '--rate', '1')).stdout.replace(/\s+/g, ' ');
  const json = JSON.parse((await cli(data, 'sample', file, '--rate', '1', '--json')).stdout) as {
    beyondRetention?: { traces: number; days: number; assumed: boolean };
  };
  return { text, beyond: json.beyondRetention };
};
const dataDir = (name: string) => join(dir, name);

describe("passk sample's warning about traces older than the trace retention", () => {
  it('names the retention migrate set (30 days): three traces, not the one of 90 days', async () => {
    const data = dataDir('thirty');
    await cli(data, 'migrate', '--trace-ttl-days', '30');
    const { text, beyond } = await sample(data);
    expect(text).toMatch(
      /3 kept traces are dated before \d{4}-\d\d-\d\d, older than the store's trace retention \(30 days, read from the store;/,
    );
    expect(text).not.toContain('90 days');
    expect(beyond).toEqual(expect.objectContaining({ traces: 3, days: 30, assumed: false }));
  });

  it('says nothing of a retention of 0 (traces kept forever)', async () => {
    const data = dataDir('forever');
    await cli(data, 'migrate', '--trace-ttl-days', '0');
    const { text, beyond } = await sample(data);
    expect(text).not.toMatch(/older than/);
    expect(beyond).toBeUndefined();
  });

  it('reads it through the local API of the process that owns the store', async () => {
    const data = dataDir('owned');
    await cli(data, 'migrate', '--trace-ttl-days', '45');
    // this test process holds the store as passk serve does: chDB open, its local API, the owner file naming both
    const store = await openClickHouse({ kind: 'embedded', path: join(data, 'store'), database: 'passk' });
    const token = newLocalToken();
    const api = await startLocalApi({ client: store.client, token });
    const release = claimStoreOwner(data, { command: 'serve', url: api.url, token });
    try {
      const { text, beyond } = await sample(data);
      expect(text).toMatch(/2 kept traces are dated before .*older than the store's trace retention \(45 days, read/);
      expect(beyond).toEqual(expect.objectContaining({ traces: 2, days: 45, assumed: false }));
    } finally {
      release();
      await api.close();
      await store.close();
    }
  });

  it("says 90 days unless changed when the store cannot be read (another process holds chDB's lock)", async () => {
    const data = dataDir('locked');
    await cli(data, 'migrate', '--trace-ttl-days', '30');
    // a lock on chDB's status file, as a process that opened the store without an owner file holds it
    const status = join(data, 'store', 'status');
    const holder = spawn('flock', [status, 'sleep', '300'], { stdio: 'ignore' });
    try {
      while (statusFileLock(status).state !== 'locked') await new Promise((r) => setTimeout(r, 50));
      const { text, beyond } = await sample(data);
      expect(text).toMatch(
        /1 kept trace is dated before .*older than the store's retention \(90 days unless changed; the store could not be read;/,
      );
      expect(beyond).toEqual(expect.objectContaining({ traces: 1, days: 90, assumed: true }));
    } finally {
      holder.kill();
    }
  });
});
