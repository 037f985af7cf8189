import { z } from 'zod';
import { summarizeHistogram, histogramOf } from '../../processors/core/histogram.ts';
import { select, type Querier } from './queries/select.ts';

/**
 * The consistency invariant: the metrics SQL recomputes from the raw trials equal those the
 * processors derived into `row_state`. Checked per row (n, c, ungraded, attempt ids) and per
 * version (the histogram summary: mean accuracy, pass@k, pass^k, flip rate, classes).
 */

const Diff = z.object({
  suite: z.string(),
  dataset_version: z.string(),
  agent_version: z.string(),
  row_id: z.string(),
  in_trials: z.number(),
  in_row_state: z.number(),
  trials_n: z.number(),
  trials_c: z.number(),
  trials_ungraded: z.number(),
  state_n: z.number(),
  state_c: z.number(),
  state_ungraded: z.number(),
  same_attempts: z.number(),
});
export type RowDifference = z.infer<typeof Diff>;

const ROWS_SQL = `
SELECT
  if(t.in_t = 1, t.suite, s.suite) AS suite, if(t.in_t = 1, t.dataset_version, s.dataset_version) AS dataset_version,
  if(t.in_t = 1, t.agent_version, s.agent_version) AS agent_version, if(t.in_t = 1, t.row_id, s.row_id) AS row_id,
  t.in_t AS in_trials, s.in_s AS in_row_state,
  t.n AS trials_n, t.c AS trials_c, t.u AS trials_ungraded, s.n AS state_n, s.c AS state_c, s.ungraded AS state_ungraded,
  t.ids = s.ids AS same_attempts
FROM (
  SELECT suite, dataset_version, agent_version, row_id, 1 AS in_t,
         countIf(passed IS NOT NULL) AS n, countIf(passed) AS c, countIf(passed IS NULL) AS u, arraySort(groupArray(event_id)) AS ids
  FROM trials FINAL
  WHERE {suite:String} = '' OR suite = {suite:String}
  GROUP BY suite, dataset_version, agent_version, row_id
) AS t
FULL OUTER JOIN (
  SELECT suite, dataset_version, agent_version, row_id, 1 AS in_s, n, c, ungraded,
         arraySort(arrayMap(a -> a.event_id, attempts)) AS ids
  FROM row_state FINAL
  WHERE {suite:String} = '' OR suite = {suite:String}
) AS s
ON t.suite = s.suite AND t.dataset_version = s.dataset_version AND t.agent_version = s.agent_version AND t.row_id = s.row_id
ORDER BY suite, dataset_version, agent_version, row_id`;

export interface ConsistencyReport {
  /** Rows compared (present in either table). */
  readonly rows: number;
  /** Rows whose counts or attempt ids differ, or that exist on one side only. */
  readonly differences: RowDifference[];
  /** Versions whose summaries (computed from each side's histogram) differ. */
  readonly versions: { suite: string; dataset_version: string; agent_version: string; from_trials: unknown; from_row_state: unknown }[];
  readonly ok: boolean;
}

/** Compares the raw trials with the row state; `ok` when every row and every version summary agree. */
export const checkConsistency = async (client: Querier, opts: { suite?: string } = {}): Promise<ConsistencyReport> => {
  const rows = await select(client, Diff, ROWS_SQL, { suite: opts.suite ?? '' });
  const differences = rows.filter(
    (r) =>
      r.in_trials !== 1 ||
      r.in_row_state !== 1 ||
      r.trials_n !== r.state_n ||
      r.trials_c !== r.state_c ||
      r.trials_ungraded !== r.state_ungraded ||
      r.same_attempts !== 1,
  );
  const byVersion = new Map<string, { key: RowDifference; t: { n: number; c: number }[]; s: { n: number; c: number }[] }>();
  for (const r of rows) {
    const id = JSON.stringify([r.suite, r.dataset_version, r.agent_version]);
    const v = byVersion.get(id) ?? { key: r, t: [], s: [] };
    if (r.in_trials === 1) v.t.push({ n: r.trials_n, c: r.trials_c });
    if (r.in_row_state === 1) v.s.push({ n: r.state_n, c: r.state_c });
    byVersion.set(id, v);
  }
  // A state with c > n cannot be summarized; it is already listed as a row difference.
  const summary = (rs: { n: number; c: number }[]) =>
    rs.every((r) => r.c <= r.n) ? summarizeHistogram(histogramOf(rs)) : { invalid: rs.filter((r) => r.c > r.n) };
  const versions = [...byVersion.values()].flatMap(({ key, t, s }) => {
    const a = summary(t);
    const b = summary(s);
    return JSON.stringify(a) === JSON.stringify(b)
      ? []
      : [{ suite: key.suite, dataset_version: key.dataset_version, agent_version: key.agent_version, from_trials: a, from_row_state: b }];
  });
  return { rows: rows.length, differences, versions, ok: differences.length === 0 && versions.length === 0 };
};
