import { z } from 'zod';
import { select, type Querier } from './select.ts';

/**
 * Dataset versions are cumulative: version V holds every row upserted in V or in an earlier
 * version (ordered by their first event), each at its latest upsert, except rows whose latest
 * upsert is a removal (a tombstone, `removed`). A must-not-break row is one whose latest upsert
 * carries the `must_not_break` tag.
 */

// Every upsert of the dataset, with the time its version first appeared.
const UPSERTS = `
  versions AS (
    SELECT dataset_version, min(occurred_at) AS v_at
    FROM dataset_rows FINAL WHERE dataset_id = {dataset_id:String} GROUP BY dataset_version
  ),
  upserts AS (
    SELECT d.*, d.must_not_break AS mnb, v.v_at AS v_at
    FROM dataset_rows AS d FINAL INNER JOIN versions AS v ON v.dataset_version = d.dataset_version
    WHERE d.dataset_id = {dataset_id:String}
  )`;

const VersionRow = z.object({
  dataset_version: z.string(),
  first_at: z.number(),
  changed_rows: z.number(),
  rows: z.number(),
  must_not_break_rows: z.number(),
  from_production: z.number(),
});
export type DatasetVersion = z.infer<typeof VersionRow>;

/**
 * The versions of a dataset, oldest first: rows changed in each, and the cumulative rows and must-not-break rows.
 * A version's rows are the rows first upserted in it or before, less those whose latest upsert is a removal; only
 * the rows ever upserted removed, must-not-break or from production have their latest upsert found per version.
 */
export const datasetVersions = async (client: Querier, opts: { dataset_id: string }): Promise<DatasetVersion[]> =>
  select(
    client,
    VersionRow,
    `WITH ${UPSERTS},
     firsts AS (SELECT row_id, min(v_at) AS first_v_at FROM upserts GROUP BY row_id),
     latest AS (
       SELECT v.dataset_version AS version, u.row_id AS row_id,
              argMax(u.mnb, (u.v_at, u.occurred_at, u.event_id)) AS mnb,
              argMax(u.provenance_kind, (u.v_at, u.occurred_at, u.event_id)) AS kind,
              argMax(u.removed, (u.v_at, u.occurred_at, u.event_id)) AS gone
       FROM versions AS v CROSS JOIN upserts AS u
       WHERE u.v_at <= v.v_at
         AND u.row_id IN (SELECT row_id FROM dataset_rows WHERE dataset_id = {dataset_id:String}
                            AND (must_not_break OR removed OR provenance_kind = 'production_failure'))
       GROUP BY version, row_id
     ),
     marked AS (
       SELECT version, countIf(gone) AS gone_rows, countIf(mnb AND NOT gone) AS must_not_break_rows,
              countIf(kind = 'production_failure' AND NOT gone) AS from_production
       FROM latest GROUP BY version
     ),
     upserted AS (
       SELECT v.dataset_version AS version, any(v.v_at) AS at, countIf(f.first_v_at <= v.v_at) AS rows
       FROM versions AS v CROSS JOIN firsts AS f GROUP BY version
     ),
     changed AS (SELECT dataset_version, uniqExact(row_id) AS changed_rows FROM upserts GROUP BY dataset_version)
     SELECT u.version AS dataset_version, toUnixTimestamp64Milli(u.at) AS first_at, ch.changed_rows AS changed_rows,
            u.rows - ifNull(m.gone_rows, 0) AS rows, ifNull(m.must_not_break_rows, 0) AS must_not_break_rows,
            ifNull(m.from_production, 0) AS from_production
     FROM upserted AS u
       INNER JOIN changed AS ch ON ch.dataset_version = u.version
       LEFT JOIN marked AS m ON m.version = u.version
     ORDER BY first_at, dataset_version`,
    { dataset_id: opts.dataset_id },
  );

const RowRow = z.object({
  row_id: z.string(),
  input: z.string(),
  expected: z.string().nullable(),
  tags: z.array(z.string()),
  must_not_break: z.boolean(),
  expected_checks: z
    .string()
    .nullable()
    .transform((j) => (j === null ? null : (JSON.parse(j) as Record<string, string | number | boolean | null>))),
  json_fields: z.array(z.enum(['input', 'expected'])),
  changed_in: z.string(),
  changed_at: z.number(),
  provenance: z.object({
    kind: z.string(),
    trace_id: z.string().nullable(),
    failure_event_id: z.string().nullable(),
    note: z.string().nullable(),
  }),
});
export type DatasetRowAtVersion = z.infer<typeof RowRow>;

/** The rows of one dataset version (cumulative, less removed rows), each at its latest upsert, with tags and provenance. */
export const datasetRows = async (
  client: Querier,
  opts: { dataset_id: string; dataset_version: string; mustNotBreakOnly?: boolean },
): Promise<DatasetRowAtVersion[]> =>
  select(
    client,
    RowRow,
    `WITH ${UPSERTS},
     latest AS (
       SELECT row_id,
              argMax(tuple(input, expected, tags, mnb, dataset_version, occurred_at,
                           provenance_kind, provenance_trace_id, provenance_failure_event_id, provenance_note,
                           expected_checks, removed, json_fields),
                     (v_at, occurred_at, event_id)) AS r
       FROM upserts
       WHERE v_at <= (SELECT v_at FROM versions WHERE dataset_version = {dataset_version:String})
       GROUP BY row_id
     )
     SELECT row_id, r.1 AS input, r.2 AS expected, r.3 AS tags, r.4 AS must_not_break,
            r.5 AS changed_in, toUnixTimestamp64Milli(r.6) AS changed_at,
            CAST(tuple(r.7, r.8, r.9, r.10), 'Tuple(kind String, trace_id Nullable(String), failure_event_id Nullable(String), note Nullable(String))') AS provenance,
            r.11 AS expected_checks, r.13 AS json_fields
     FROM latest
     WHERE NOT r.12 AND (NOT {mnb_only:Bool} OR r.4)
     ORDER BY row_id`,
    { dataset_id: opts.dataset_id, dataset_version: opts.dataset_version, mnb_only: opts.mustNotBreakOnly === true },
  );

const ChangeRow = z.object({
  dataset_version: z.string(),
  row_id: z.string(),
  must_not_break: z.boolean(),
  removed: z.boolean(),
  expected: z.string().nullable(),
  tags: z.array(z.string()),
  provenance: z.object({ kind: z.string(), trace_id: z.string().nullable(), note: z.string().nullable() }),
});
export type DatasetVersionChange = z.infer<typeof ChangeRow>;

/**
 * What the Datasets view shows of each version, aggregated in the store rather than by reading every row of every
 * version: the version's must-not-break rows (each at its latest upsert, as `datasetRows` gives them) and the rows
 * it removed from the version before it (in `datasetVersions`' order), by version and row id. Only the upserts of
 * rows that were ever tagged must-not-break or removed are read.
 */
export const datasetVersionChanges = async (
  client: Querier,
  opts: { dataset_id: string },
): Promise<DatasetVersionChange[]> =>
  select(
    client,
    ChangeRow,
    `WITH ${UPSERTS},
     ordered AS (
       SELECT dataset_version, v_at, lagInFrame(v_at) OVER w AS prev_at, row_number() OVER w > 1 AS has_prev
       FROM versions
       WINDOW w AS (ORDER BY toUnixTimestamp64Milli(v_at), dataset_version ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
     ),
     latest AS (
       SELECT o.dataset_version AS version, u.row_id AS row_id,
              argMax(tuple(u.mnb, u.removed, u.expected, u.tags, u.provenance_kind, u.provenance_trace_id, u.provenance_note),
                     (u.v_at, u.occurred_at, u.event_id)) AS r,
              any(o.has_prev) AND countIf(u.v_at <= o.prev_at) > 0
                AND NOT argMaxIf(u.removed, (u.v_at, u.occurred_at, u.event_id), u.v_at <= o.prev_at) AS in_previous
       FROM ordered AS o CROSS JOIN upserts AS u
       WHERE u.v_at <= o.v_at
         -- only rows ever upserted must-not-break or removed can be either in some version
         AND u.row_id IN (SELECT row_id FROM dataset_rows
                          WHERE dataset_id = {dataset_id:String} AND (must_not_break OR removed))
       GROUP BY version, row_id
     )
     SELECT version AS dataset_version, row_id, r.1 AND NOT r.2 AS must_not_break, r.2 AND in_previous AS removed,
            r.3 AS expected, r.4 AS tags,
            CAST(tuple(r.5, r.6, r.7), 'Tuple(kind String, trace_id Nullable(String), note Nullable(String))') AS provenance
     FROM latest
     WHERE (r.1 AND NOT r.2) OR (r.2 AND in_previous)
     ORDER BY dataset_version, row_id`,
    { dataset_id: opts.dataset_id },
  );

const AgentVersionRow = z.object({ agent_version: z.string() });

/**
 * The agent versions with rows in the store on a suite (the processors' version summaries: a few rows, whatever the
 * number of trials), sorted: whose production traces a reviewer may turn into rows of the suite's dataset.
 */
export const suiteAgentVersions = async (client: Querier, opts: { suite: string }): Promise<string[]> =>
  (
    await select(
      client,
      AgentVersionRow,
      `SELECT agent_version FROM version_summaries FINAL WHERE suite = {suite:String}
       GROUP BY agent_version HAVING sum(rows) > 0 ORDER BY agent_version`,
      { suite: opts.suite },
    )
  ).map((r) => r.agent_version);
