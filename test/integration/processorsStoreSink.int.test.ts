import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { openStore, type Store } from '../../deploy/store.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { trial } from '../helpers/processorFixtures.ts';

/**
 * `passk process` and `passk serve --process` (and the demo) build their store sink in one place,
 * `startProcessors`. On chDB the sink must use the store's raw bulk insert: the generic
 * `client.exec` path splices every batch into the SQL text (docs/performance.md). This watches the
 * real store: it counts the fast path's calls and fails on any INSERT sent through `client.exec`.
 */
describe('the processors’ store sink (real chDB)', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('writes every batch through the store’s bulk insert, never through client.exec', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-sink-path-'));
    dirs.push(dataDir);
    const config = PasskConfig.parse({ dataDir });
    const seen = { fast: 0, execInserts: [] as string[] };
    let opened: Store | undefined;
    const watched = async (c: PasskConfig): Promise<Store> => {
      const store = await openStore(c);
      const exec = store.client.exec.bind(store.client);
      store.client.exec = ((params: Parameters<typeof exec>[0]) => {
        if (/^\s*INSERT/i.test(params.query)) seen.execInserts.push(params.query);
        return exec(params);
      }) as typeof store.client.exec;
      opened = {
        ...store,
        insertJsonRows: (table, body, settings) => {
          seen.fast++;
          return store.insertJsonRows(table, body, settings);
        },
      };
      return opened;
    };
    const log = createMemoryLog();
    const rows = ['r1', 'r2', 'r3'];
    await log.publisher.publish(
      rows.flatMap((row) => [0, 1, 2].map((attempt) => trial({ row, version: 'v1', attempt, passed: attempt > 0 }))),
    );
    const run = await startProcessors(config, { log, untilCaughtUp: true, maxWaitMs: 1, openStore: watched });
    expect((await run.done).trials).toBe(9);
    expect(opened).toBeDefined();
    expect(seen.execInserts).toEqual([]);
    expect(seen.fast).toBeGreaterThan(0);
    // and what went that way is in the store
    const store = await openStore(config, { migrate: false });
    try {
      const r = await store.client.query({ query: 'SELECT count() AS n FROM trials FINAL', format: 'JSONEachRow' });
      expect(await r.json()).toEqual([{ n: 9 }]);
    } finally {
      await store.close();
    }
  });
});
