import { spawn, type ChildProcess } from 'node:child_process';
import { storeTargets } from '../helpers/storeTargets.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createClickHouseRowSink,
  migrate,
  openClickHouse,
  select,
  StoreLocked,
  type StoreClient,
} from '../../sinks/clickhouse/index.ts';
import { z } from 'zod';
import { rowSinkContract } from '../contracts/rowSink.contract.ts';

/** The sink contract on chDB (and on a server when CLICKHOUSE_URL is set), plus the embedded store's lock. */

const dir = mkdtempSync(join(tmpdir(), 'passk-sink-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const targets = storeTargets(dir, 'passk_sink_test');

const Window = z.object({ agent_version: z.string(), segment: z.string(), seq: z.number(), sampled: z.number() });

for (const { name, target, skip } of targets) {
  let store: StoreClient | undefined;
  const backend = async (): Promise<StoreClient> => {
    if (!store) {
      store = await openClickHouse(target);
      await migrate(store.client);
    }
    return store;
  };
  afterAll(async () => {
    if (store?.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
    await store?.close();
  });
  rowSinkContract(
    name,
    {
      table: 'production_windows',
      // One window per i; the key (agent_version, segment, grader, window_start, window_end) is distinct per i.
      row: (i) => ({
        agent_version: 'v',
        segment: `s${i}`,
        grader: 'g',
        window_start: '1767225600.000',
        window_end: '1767229200.000',
        sampled: i,
        ungraded: 0,
        weight: 1,
        passed_weight: 1,
        pass_rate: 1,
        ci_low: 0,
        ci_high: 1,
        seq: 1,
      }),
      indexOf: (r) => Number(r.sampled),
      fresh: async () =>
        void (await (await backend()).client.command({ query: 'TRUNCATE TABLE production_windows_v2' })),
      open: async (opts) =>
        createClickHouseRowSink({
          client: (await backend()).client,
          insertJsonRows: (await backend()).insertJsonRows,
          retry: { retries: 2, initialMs: 0, factor: 1, maxMs: 0 },
          ...opts,
        }),
      readBack: async () =>
        select(
          (await backend()).client,
          Window,
          'SELECT agent_version, segment, seq, sampled FROM production_windows_v2 FINAL ORDER BY sampled',
        ),
      closeBackend: async () => {
        await store?.close();
        store = undefined;
      },
    },
    skip,
  );
}

describe('embedded store lock', () => {
  it('says which process holds the store when another one has it open', async () => {
    const path = join(dir, 'held');
    const code = `const { createChdbConnection } = require('chdb/connection'); createChdbConnection({ path: ${JSON.stringify(path)} }); console.log('ready'); setInterval(() => {}, 1000);`;
    const child: ChildProcess = spawn(process.execPath, ['-e', code], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        child.on('exit', (c) => reject(new Error(`holder exited with ${c}`)));
      });
      const error = await openClickHouse({ kind: 'embedded', path, database: 'x' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreLocked);
      expect((error as StoreLocked).pid).toBe(child.pid);
      expect((error as StoreLocked).message).toContain(`held by another passk process (pid ${child.pid})`);
      expect((error as StoreLocked).retriable).toBe(false);
    } finally {
      child.kill();
    }
  });
});
