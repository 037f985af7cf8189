/**
 * Cold `/api/rows` pages (`rowPageFromStore`, nothing kept) of two checkouts in one process, alternating, on one
 * kept generated store (bench/generatedStore.ts): the dashboard bench's three Rows questions, wall and CPU of the
 * process per page (chDB runs in it; medians of `samples`), so both are measured under the same load. The answers
 * of both are compared byte for byte first.
 *
 *   node --import tsx bench/profile/rowsAb.ts 5 DIR OTHER_CHECKOUT
 */
import { join } from 'node:path';
import { RowQuery } from '../../web/rowPage.ts';
import { bareGroupBy, openGeneratedStore } from '../dashboardKit.ts';
import { alternate } from './alternate.ts';
import type * as Rows from '../../web/storeRows.ts';

const samples = Number(process.argv[2] ?? 5);
const dir = process.argv[3]!;
const other = process.argv[4]!;
const store = await openGeneratedStore(dir);
const pageOf = async (root: string) => ((await import(join(root, 'web/storeRows.ts'))) as typeof Rows).rowPageFromStore;
const page = { other: await pageOf(other), this: await pageOf(join(import.meta.dirname, '../..')) };
const scope = { suite: 'bench', dataset_version: 'd1' };
const asked: Record<string, Record<string, string>> = {
  first: { baseline: 'v1', candidate: 'v2' },
  'c.rate': { baseline: 'v1', candidate: 'v2', sort: 'c.rate', dir: 'desc', offset: '400' },
  'flip+lat+q': { baseline: 'v1', candidate: 'v2', to: 'flip', sort: 'b.latency', q: 'request 123' },
};
const only = process.env.ONLY?.split(',');
const names = Object.keys(asked).filter((n) => !only || only.includes(n));
for (const name of names) {
  const q = { ...scope, ...RowQuery.parse(asked[name]) };
  const [a, b] = [JSON.stringify(await page.other(store.client, q)), JSON.stringify(await page.this(store.client, q))];
  console.log(`${name}: ${a === b ? 'byte-identical' : 'DIFFERENT'} (${b.length} bytes)`);
  if (a !== b) process.exitCode = 1;
}
await alternate(
  [
    ['bare GROUP BY', () => bareGroupBy(store.client)],
    ...names.flatMap((name): [string, () => Promise<unknown>][] => {
      const q = { ...scope, ...RowQuery.parse(asked[name]) };
      return [
        [`${name}, other`, () => page.other(store.client, q)],
        [`${name}, this`, () => page.this(store.client, q)],
      ];
    }),
  ],
  samples,
);
await store.close();
