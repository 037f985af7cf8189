import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { openClickHouse, type StoreClient } from '../../sinks/clickhouse/connection.ts';
import { migrate } from '../../sinks/clickhouse/migrate.ts';
import { explorerCheckNames, rowsMaybeMatching } from '../../sinks/clickhouse/queries/explorerCounts.ts';
import { loadTrialsForReport } from '../../sinks/clickhouse/queries/report.ts';
import { NOT_RETRACTED } from '../../sinks/clickhouse/queries/retracted.ts';
import { trialToRow } from '../../sinks/clickhouse/rows/trialRow.ts';
import { explorerView } from '../../web/explorerView.ts';
import { matchesWords, RowQuery, rowPage, searchWords } from '../../web/rowPage.ts';
import { rowPageFromStore } from '../../web/storeRows.ts';
import { onStore, storeTargets } from '../helpers/storeTargets.ts';

/**
 * The Rows page's check names (`explorerCheckNames`: ordered over the first row of each check-name sequence only)
 * and its search's first pass (`rowsMaybeMatching`: one ASCII case-insensitive `max` per word) against what they
 * replace, on random scopes: check sequences with repeats and in other orders, copies and conflicting re-sends of
 * one event id (other checks, input and output), retracted runs, and texts with upper case, U+0130 İ, the Kelvin
 * sign and other letters outside ASCII. The names equal the explorer's over every trial and the old query's (every
 * trial ordered, with FINAL); the first pass holds every row the explorer's search keeps and none the old first
 * pass left out; every page asked (searches, sides, sorts) equals the explorer's page over every trial.
 */

const dir = mkdtempSync(join(tmpdir(), 'passk-rows-names-search-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 4, 1);

/** The check names as the code before ordered them: every trial's, with FINAL. */
const OLD_NAMES_SQL = `SELECT name FROM (
  SELECT name, min((row_id, toString(agent_version), occurred_at, event_id, i)) AS first
  FROM trials FINAL
  ARRAY JOIN arrayMap(ch -> ch.name, checks) AS name, arrayEnumerate(checks) AS i
  WHERE suite = {suite:String} AND dataset_version = {dataset_version:String} AND ${NOT_RETRACTED}
  GROUP BY name)
ORDER BY first`;

/** The search's first pass as the code before ran it: arrays of UTF-8 case-insensitive positions per trial. */
const OLD_FIRST_PASS_SQL = `SELECT row_id FROM trials
WHERE suite = {suite:String} AND dataset_version = {dataset_version:String} AND ${NOT_RETRACTED}
GROUP BY row_id
HAVING arrayAll(x -> x > 0, maxForEach(arrayMap(p -> toUInt8(p > 0), multiSearchAllPositionsCaseInsensitiveUTF8(
  replaceAll(replaceAll(concat(row_id, '\\n', ifNull(input, ''), '\\n', ifNull(expected, ''), '\\n',
    if(has({versions:Array(String)}, toString(agent_version)), ifNull(output, ''), '')), '\u0130', 'i'), '\u212A', 'k'),
  {words:Array(String)}))))`;

const TEXTS = ['Parcel 1', 'parcel 12', 'İade 3', 'IADE', '\u212Aelvin', 'kelvin 2', 'ſecret', 'Straße', 'ÉTÉ 1'];
const WORDS = ['parcel', '1', '12', 'iade', 'ade', 'kelvin', 'elvin', 'secret', 'ſecret', 'straße', 'été', 'r2', 'r'];

for (const c of storeTargets(dir, 'passk_rows_names_search_test'))
  describe.skipIf(c.skip !== undefined)(onStore('the Rows page names and first pass on', c), () => {
    let store: StoreClient;
    beforeAll(async () => {
      store = await openClickHouse(c.target);
      await migrate(store.client);
    }, 60_000);
    afterAll(async () => {
      if (store.kind === 'server') await store.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
      await store.close();
    });

    it('orders the names, finds the rows and answers the pages as before, on random scopes', async () => {
      const trial = fc.record({
        row: fc.integer({ min: 0, max: 5 }),
        version: fc.constantFrom('v1', 'v2', 'v3'),
        run: fc.constantFrom('run-a', 'run-b'),
        attempt: fc.integer({ min: 0, max: 2 }),
        passed: fc.constantFrom(true, false, null),
        names: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 3 }),
        input: fc.option(fc.constantFrom(...TEXTS), { nil: undefined }),
        expected: fc.option(fc.constantFrom(...TEXTS), { nil: undefined }),
        output: fc.option(fc.constantFrom(...TEXTS), { nil: undefined }),
        at: fc.integer({ min: 0, max: 3 }),
        tags: fc.subarray(['vip', 'must_not_break', 'x']),
        category: fc.constantFrom(undefined, 'wrong_tool', 'retrieval_miss'),
        // 0: stored once; 1: an unmerged copy; 2: a conflicting re-send (other names, input and output)
        twice: fc.constantFrom(0, 0, 0, 1, 2),
      });
      const retraction = fc.record({
        row: fc.integer({ min: 0, max: 5 }),
        version: fc.constantFrom('v1', 'v2', 'v3'),
        run: fc.constantFrom('run-a', 'run-b'),
      });
      const query = fc.record({
        q: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
        baseline: fc.constantFrom(undefined, 'v1', 'v2', 'v3'),
        candidate: fc.constantFrom(undefined, 'v1', 'v2', 'v3'),
        sort: fc.constantFrom(undefined, 'c.rate', 'b.latency'),
      });
      let draw = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(trial, { minLength: 1, maxLength: 25 }),
          fc.array(retraction, { maxLength: 2 }),
          fc.array(query, { minLength: 1, maxLength: 4 }),
          async (trials, retractions, queries) => {
            const scope = { suite: `p${++draw}`, dataset_version: 'd1' };
            const of = (t: (typeof trials)[number], i: number): TrialRecorded => ({
              event_id: deterministicEventId(T0 + t.at, 'rows-names-search', draw, i),
              type: 'TrialRecorded',
              schema_version: 1,
              occurred_at: T0 + t.at,
              producer: 'passk-test/0',
              ...scope,
              row_id: `r${t.row}`,
              run_id: t.run,
              attempt: t.attempt,
              agent: { version: t.version, model: 'm' },
              ...(t.input === undefined ? {} : { input: t.input }),
              ...(t.expected === undefined ? {} : { expected: t.expected }),
              ...(t.output === undefined ? {} : { output: t.output }),
              passed: t.passed,
              checks: t.names.map((name) => ({ name, answer: t.passed ?? false })),
              ...(t.tags.length > 0 ? { tags: t.tags } : {}),
              ...(t.category === undefined ? {} : { failure_category: t.category }),
            });
            const stored = trials.map(of);
            const body = (ts: readonly TrialRecorded[]) =>
              Buffer.from(ts.map((t) => JSON.stringify(trialToRow(t))).join('\n') + '\n');
            await store.insertJsonRows('trials', body(stored));
            const copies = stored.filter((_, i) => trials[i]!.twice === 1);
            const resent = stored
              .filter((_, i) => trials[i]!.twice === 2)
              .map((t, i) => ({
                ...t,
                input: TEXTS[i % TEXTS.length]!,
                output: TEXTS[(i + 3) % TEXTS.length]!,
                checks: [...(t.checks ?? [])].reverse().concat([{ name: 'e', answer: true }]),
                tags: [`resent${i % 2}`],
                failure_category: 'policy_violation' as const,
              }));
            if (copies.length + resent.length > 0)
              await store.insertJsonRows('trials', body([...copies, ...resent]), { insert_deduplicate: 0 });
            if (retractions.length > 0)
              await store.insertJsonRows(
                'retractions',
                Buffer.from(
                  retractions
                    .map((r, i) =>
                      JSON.stringify({
                        event_id: deterministicEventId(T0, 'rows-names-search-retraction', draw, i),
                        occurred_at: (T0 + 10_000) / 1000,
                        producer: 'passk-test/0',
                        schema_version: 1,
                        retraction_id: `x${draw}-${i}`,
                        run_id: r.run,
                        ...scope,
                        agent_version: r.version,
                        row_id: `r${r.row}`,
                        reason: 'test',
                        retracted_by: 'test',
                        trials: 1,
                      }),
                    )
                    .join('\n'),
                ),
              );

            const view = explorerView(
              scope,
              await loadTrialsForReport(store.client, {
                suites: [scope.suite],
                datasetVersions: [scope.dataset_version],
              }),
            );
            const names = await explorerCheckNames(store.client, scope);
            expect(names).toEqual(view.checks);
            const old = await store.client.query({ query: OLD_NAMES_SQL, query_params: scope, format: 'JSONEachRow' });
            expect(names).toEqual((await old.json<{ name: string }>()).map((r) => r.name));

            for (const q of queries) {
              const words = searchWords(q.q.join(' '));
              const ascii = words.filter((w) => [...w].every((ch) => ch.charCodeAt(0) < 0x80));
              const versions = [q.baseline ?? 'v1', q.candidate ?? 'v2'];
              const found = new Set(await rowsMaybeMatching(store.client, { ...scope, words: ascii, versions }));
              for (const r of view.rows)
                if (matchesWords(r, ascii, versions)) expect(found, `${r.row_id} ${q.q.join(' ')}`).toContain(r.row_id);
              if (ascii.length > 0) {
                const before = await store.client.query({
                  query: OLD_FIRST_PASS_SQL,
                  query_params: { ...scope, words: ascii, versions },
                  format: 'JSONEachRow',
                });
                const was = new Set((await before.json<{ row_id: string }>()).map((r) => r.row_id));
                for (const id of found) expect(was).toContain(id);
              }
              const asked = RowQuery.parse({
                q: q.q.join(' '),
                ...(q.baseline ? { baseline: q.baseline } : {}),
                ...(q.candidate ? { candidate: q.candidate } : {}),
                ...(q.sort ? { sort: q.sort } : {}),
              });
              expect(await rowPageFromStore(store.client, { ...scope, ...asked }), JSON.stringify(q)).toEqual(
                rowPage(view, asked),
              );
            }
          },
        ),
        { numRuns: 30, seed: 3232 },
      );
    }, 300_000);
  });
