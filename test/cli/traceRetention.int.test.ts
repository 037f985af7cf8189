import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../sinks/clickhouse/index.ts';

/**
 * The trace retention a user sets with `passk migrate --trace-ttl-days` stays set: the next commands that open the
 * store (`passk check`, a plain `passk migrate`) leave it as it is (until 2026-12-07 every open set it back to 90).
 * Read from the store itself (`system.tables`' `engine_full`, what `SHOW CREATE TABLE traces` shows), on the embedded
 * chDB store; a ClickHouse server takes the same path (`openStore`).
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'passk-ttl-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

type Run = { code: number; stdout: string; stderr: string };
const passk = (...args: string[]): Promise<Run> => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('CLICKHOUSE_') && (!k.startsWith('PASSK_') || k === 'PASSK_CLI_BUILD'),
    ),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'bin/passk.mjs'), '--data-dir', dataDir, ...args],
      { cwd: dataDir, env: { ...env, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
};

/** The TTL clause of `traces` as the store has it ('' when there is none), the CLI's processes all closed. */
const traceTtl = async (): Promise<string> => {
  const store = await openClickHouse({ kind: 'embedded', path: join(dataDir, 'store'), database: 'passk' });
  try {
    const rs = await store.client.query({
      query: `SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = 'traces'`,
      format: 'JSONEachRow',
    });
    const [row] = (await rs.json()) as { engine_full: string }[];
    return /TTL (.*?) SETTINGS/.exec(row?.engine_full ?? '')?.[1] ?? '';
  } finally {
    await store.close();
  }
};

const ok = (run: Run): Run => {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run;
};

describe('the trace retention set by passk migrate --trace-ttl-days', () => {
  it('is 90 days on a new store, and stays what migrate set through the commands that open the store', async () => {
    ok(await passk('migrate'));
    expect(await traceTtl()).toBe('toDateTime(occurred_at) + toIntervalDay(90)');

    ok(await passk('migrate', '--trace-ttl-days', '30'));
    expect(await traceTtl()).toBe('toDateTime(occurred_at) + toIntervalDay(30)');
    ok(await passk('check'));
    expect(await traceTtl()).toBe('toDateTime(occurred_at) + toIntervalDay(30)');
    ok(await passk('migrate'));
    expect(await traceTtl()).toBe('toDateTime(occurred_at) + toIntervalDay(30)');

    // 0 = forever: no TTL at all, and still none after another command opened the store
    ok(await passk('migrate', '--trace-ttl-days', '0'));
    expect(await traceTtl()).toBe('');
    ok(await passk('check'));
    expect(await traceTtl()).toBe('');
  });
});
