import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openClickHouse, select } from '../../sinks/clickhouse/index.ts';
import { EMBEDDED_SERVER_SETTINGS, STORE_SETTINGS } from '../../sinks/clickhouse/settings.ts';

/**
 * The embedded store's engine runs with bounded memory (issue #32: `passk serve` ≤ 1 GB RSS): its caches and its
 * memory for queries are passk's (EMBEDDED_SERVER_SETTINGS), not chDB's defaults (a server's: 5 GiB caches, 90% of
 * the machine for queries). They are server settings: a ClickHouse server takes them from its own configuration, and
 * passk never sends them with a query (there they are unknown settings).
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const names = Object.keys(EMBEDDED_SERVER_SETTINGS);

describe('the embedded store opens with bounded memory', () => {
  it('its engine runs with passk’s cache sizes and memory bound, and they hold after it is closed and opened again', async () => {
    for (let open = 0; open < 2; open++) {
      const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk_bounds' });
      try {
        const rows = await select(
          store.client,
          z.object({ name: z.string(), value: z.string() }),
          'SELECT name, value FROM system.server_settings WHERE name IN {names:Array(String)} ORDER BY name',
          { names },
        );
        expect(Object.fromEntries(rows.map((r) => [r.name, r.value]))).toEqual(
          Object.fromEntries(Object.entries(EMBEDDED_SERVER_SETTINGS).map(([k, v]) => [k, String(v)])),
        );
        // a query reads the store as before
        await store.client.command({ query: 'CREATE TABLE IF NOT EXISTS t (x UInt64) ENGINE = MergeTree ORDER BY x' });
        await store.client.command({ query: 'INSERT INTO t SELECT number FROM numbers(1000)' });
        expect(await select(store.client, z.object({ n: z.number() }), 'SELECT count() AS n FROM t')).toEqual([
          { n: 1000 * (open + 1) },
        ]);
      } finally {
        await store.close();
      }
    }
  });

  it('they are server settings, never sent with a query: a ClickHouse server keeps its own', async () => {
    const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk_bounds' });
    try {
      const asQuery = await select(
        store.client,
        z.object({ name: z.string() }),
        'SELECT name FROM system.settings WHERE name IN {names:Array(String)}',
        { names },
      );
      expect(asQuery).toEqual([]);
      for (const name of names) expect(Object.keys(STORE_SETTINGS)).not.toContain(name);
    } finally {
      await store.close();
    }
  });
});
