import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { openClickHouse, type StoreClient } from '../../sinks/clickhouse/connection.ts';
import { migrate } from '../../sinks/clickhouse/migrate.ts';
import { trialToRow } from '../../sinks/clickhouse/rows/trialRow.ts';
import { rowCounts } from '../../sinks/clickhouse/queries/rowCounts.ts';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';

/**
 * `rowCounts` sends one line per distinct set of counts with the ids of its rows, and puts each version's rows back
 * in the order the store's `ORDER BY length(row_id), row_id` gives (UTF-8 bytes): the order the report and the
 * comparison met them in before, which decides between ids the core's row order holds equal ("r01" and "r1"). Ids
 * whose code units and bytes sort differently (a character past U+E000 against one written with a surrogate pair),
 * of one length in bytes but not in code units, and ids that share their counts or not.
 */
const dir = mkdtempSync(join(tmpdir(), 'passk-row-counts-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 3, 1);
const IDS = [
  'r1',
  'r01',
  'r001',
  'r10',
  'r2',
  'R1',
  'é',
  'e',
  'ée',
  'ab',
  '\uE000',
  '\u{1D7D8}',
  '\uFFFD1',
  'a\u{1F600}',
  'zz',
  'r1 ',
  '',
];

for (const c of storeTargets(dir, 'passk_row_counts_order_test'))
  describe.skipIf(c.skip !== undefined)(onStore('rowCounts in the store order of its rows on', c), () => {
    let store: StoreClient;
    beforeAll(async () => {
      store = await openClickHouse(c.target);
      await migrate(store.client);
      const trials: TrialRecorded[] = [];
      for (const [i, row_id] of IDS.entries())
        for (const version of ['v1', 'v2'])
          for (let attempt = 0; attempt < 1 + (i % 4); attempt++) {
            const at = T0 + i * 100 + attempt;
            trials.push({
              event_id: deterministicEventId(at, 'row-counts-order', i, version, attempt),
              type: 'TrialRecorded',
              schema_version: 1,
              occurred_at: at,
              producer: 'passk-test/0',
              suite: 'o',
              dataset_version: 'd1',
              row_id,
              run_id: 'run-1',
              attempt,
              agent: { version, model: 'm' },
              output: `out ${(i + attempt) % 2}`,
              passed: (i + attempt) % 3 !== 0,
              checks: [],
            });
          }
      await store.insertJsonRows(
        'trials',
        Buffer.from(trials.map((t) => JSON.stringify(trialToRow(t))).join('\n') + '\n'),
      );
    }, 120_000);
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    it("gives each version's rows in the store's (length, id) order", async () => {
      const rs = await store.client.query({
        query: `SELECT DISTINCT row_id FROM trials WHERE suite = 'o' ORDER BY length(row_id), row_id`,
        format: 'JSONCompactEachRow',
      });
      const order = (await rs.json<[string]>()).map(([r]) => r);
      expect([...order].sort()).toEqual([...IDS].sort());
      // the store's order is not the code units' (so the test tells them apart)
      expect(order).not.toEqual([...order].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)));
      const counted = await rowCounts(store.client, { suite: 'o', dataset_version: 'd1' });
      expect([...counted.keys()]).toEqual(['v1', 'v2']);
      for (const rows of counted.values()) {
        expect(rows.map((r) => r.row_id)).toEqual(order);
        // rows sharing their counts were sent together, and each keeps its own numbers
        for (const r of rows) expect(r.planned.row_id).toBe(r.row_id);
      }
      expect(counted.get('v1')!.find((r) => r.row_id === 'r10')!.planned).toMatchObject({ n: 4, c: 2 });
    });
  });
