import { describe, expect, it } from 'vitest';
import { renderClusterTable, renderCreateTable } from './ddl.ts';
import { MIGRATIONS, renderClusterDdl } from './migrations.ts';
import { TABLES } from './tables.ts';

describe('DDL rendered from the table definitions', () => {
  it('one node: ReplacingMergeTree with its version, partition, order, codecs, settings', () => {
    const sql = renderCreateTable(TABLES.row_state);
    expect(sql).toMatch(/^CREATE TABLE IF NOT EXISTS `row_state`\n\(/);
    expect(sql).toContain('ENGINE = ReplacingMergeTree(seq)');
    expect(sql).toContain('ORDER BY (`suite`, `agent_version`, `dataset_version`, `row_id`)');
    expect(sql).toContain('SETTINGS non_replicated_deduplication_window = 1000');
    const trials = renderCreateTable(TABLES.trials);
    expect(trials).toContain("`occurred_at` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1))");
    expect(trials).toContain("`must_not_break` Bool MATERIALIZED has(tags, 'must_not_break')");
    expect(trials).toContain(
      "`checks` Array(Tuple(name String, answer String, passed Nullable(Bool))) COMMENT 'answer is JSON text' CODEC(ZSTD(3))",
    );
    expect(trials).toContain('PARTITION BY toYYYYMM(occurred_at)');
  });

  it('version_summaries and production_windows_v2: keyed so that every snapshot and every window length is its own row', () => {
    const summaries = renderCreateTable(TABLES.version_summaries);
    expect(summaries).toContain('ENGINE = ReplacingMergeTree(next_offset)');
    expect(summaries).toContain('ORDER BY (`suite`, `dataset_version`, `agent_version`, `partition`)');
    expect(summaries).toContain('`histogram` Map(String, UInt64)');
    expect(summaries).toContain('`ungraded_histogram` Map(String, UInt64)');
    // migration 2's statement is frozen: the table as it was, without migration 17's column
    expect(MIGRATIONS[1]!.up().join('\n')).not.toContain('ungraded_histogram');
    const windows = renderCreateTable(TABLES.production_windows);
    expect(windows).toMatch(/^CREATE TABLE IF NOT EXISTS `production_windows_v2`/);
    expect(windows).toContain('ORDER BY (`agent_version`, `segment`, `grader`, `window_start`, `window_end`)');
  });

  it('cluster: a Replicated* local table and a Distributed table over it, ON CLUSTER, from the same definition', () => {
    const [local, distributed] = renderClusterTable(TABLES.row_state, { cluster: 'prod', database: 'passk' });
    expect(local).toMatch(/^CREATE TABLE IF NOT EXISTS passk\.`row_state_local` ON CLUSTER 'prod'\n\(/);
    expect(local).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', seq)",
    );
    expect(local).not.toContain('non_replicated_deduplication_window');
    expect(distributed).toBe(
      "CREATE TABLE IF NOT EXISTS passk.`row_state` ON CLUSTER 'prod' AS passk.`row_state_local`\n" +
        "ENGINE = Distributed('prod', 'passk', 'row_state_local', cityHash64(suite, row_id))",
    );
    const [traces] = renderClusterTable(TABLES.traces, {
      cluster: 'c',
      database: 'db',
      zooPath: '/t/{shard}/{table}',
      replica: 'r1',
    });
    expect(traces).toContain("ENGINE = ReplicatedReplacingMergeTree('/t/{shard}/{table}', 'r1')");
    expect(traces).toContain('SETTINGS ttl_only_drop_parts = 1');
  });

  it('the cluster script covers the migrations table and every table of every migration', () => {
    const script = renderClusterDdl({ cluster: 'c', database: 'passk' });
    // migrations table + migration 1's 12 tables + version_summaries + production_windows_v2, each local and distributed;
    // then the copy; then migration 4's columns on dataset_rows and migration 5's on traces, local and distributed;
    // then migration 6: production_windows_v2's nullable pass rate and late count, local and distributed, and its UPDATE;
    // then migration 7: its nullable sampled and sampled_rule, local and distributed, and its UPDATE;
    // then migration 8's columns on row_state, 9's on traces, 10's on trials, 11's on dataset_rows, local and distributed;
    // then migration 12's store_positions (the store's ledger), local and distributed;
    // then migration 13's retractions, local and distributed, and row_state's retracted_runs, local and distributed;
    // then migration 14's columns on gate_decisions, 15's on runs, 16's on gate_decisions and 17's on version_summaries, local and distributed;
    // then migration 18's counts columns on row_state, 19's fingerprint on trials, 20's explorer columns on
    // row_state, 21's adaptive_confirmations on gate_decisions, local and distributed.
    expect(script).toHaveLength(
      2 * (1 + 12 + 1 + 1) + 1 + 2 + 2 + 5 + 5 + 2 + 2 + 2 + 2 + 2 + 4 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2,
    );
    expect(script[0]).toContain('passk.`passk_migrations_local`');
    const all = [...script];
    // Migration 21, last: of an adaptive candidate's attempts, those of confirmation runs.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`gate_decisions_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `adaptive_confirmations` Nullable\(UInt32\)/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`gate_decisions` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `adaptive_confirmations` /,
      ),
    ]);
    // Migration 20, before it: each attempt's extras and the row's Rows-view counts, computed on insert.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`row_state_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `attempt_extras` Array\(Tuple\(failure_category .* ADD COLUMN IF NOT EXISTS `explorer` Tuple\(cnt UInt32, .* MATERIALIZED CAST\(tuple\(/s,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`row_state` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `attempt_extras` /,
      ),
    ]);
    // Migration 19, before it: each trial's fingerprint for the row-state proof, computed on insert.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`trials_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `fingerprint` UInt64 MATERIALIZED cityHash64\(/,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`trials` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `fingerprint` /),
    ]);
    // Migration 18, before it: each row state's counts lines, computed on insert.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`row_state_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `counts_graded` Tuple\(exact Bool, .* MATERIALIZED CAST\(tuple\(/s,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`row_state` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `counts_graded` /),
    ]);
    // Migration 17, before it: the rows with ungraded attempts in each version snapshot.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`version_summaries_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `ungraded_histogram` Map\(String, UInt64\)/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`version_summaries` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `ungraded_histogram`/,
      ),
    ]);
    // Migration 16, before it: the must-not-break rows a gate cannot protect, on its gate decisions.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`gate_decisions_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `unprotected` Array\(Tuple\(suite String, dataset_version String, row_id String, class String, c UInt32, n UInt32\)\)/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`gate_decisions` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `unprotected`/,
      ),
    ]);
    // Migration 15, before it: the dataset file and agent of a passk run, on runs.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`runs_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `dataset_path` Nullable\(String\).*`agent_spec` Nullable\(String\)/,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`runs` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `dataset_path`/),
    ]);
    // Migration 14, before it: an adaptive candidate's attempts, rows and max-k on its gate decisions.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`gate_decisions_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `adaptive_attempts` Nullable\(UInt32\).*`adaptive_max_k`/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`gate_decisions` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `adaptive_attempts`/,
      ),
    ]);
    // Migration 13, before it: the retractions of runs, and the runs retracted on each row state.
    expect(script.splice(-4)).toEqual([
      expect.stringMatching(/^CREATE TABLE IF NOT EXISTS passk\.`retractions_local` ON CLUSTER 'c'/),
      expect.stringMatching(/^CREATE TABLE IF NOT EXISTS passk\.`retractions` ON CLUSTER 'c' AS/),
      "ALTER TABLE passk.`row_state_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `retracted_runs` Array(String) COMMENT 'runs retracted on this row (RunRetracted), sorted'",
      "ALTER TABLE passk.`row_state` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `retracted_runs` Array(String) COMMENT 'runs retracted on this row (RunRetracted), sorted'",
    ]);
    // Migration 12, before it: the store's ledger.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(/^CREATE TABLE IF NOT EXISTS passk\.`store_positions_local` ON CLUSTER 'c'/),
      expect.stringMatching(/^CREATE TABLE IF NOT EXISTS passk\.`store_positions` ON CLUSTER 'c' AS/),
    ]);
    // Migration 11: the dataset rows' JSON fields; before it, migration 10: the trials' error message.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`dataset_rows_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `json_fields` Array\(LowCardinality\(String\)\) COMMENT/,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`dataset_rows` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `json_fields`/),
    ]);
    expect(script.splice(-2)).toEqual([
      "ALTER TABLE passk.`trials_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `error_message` Nullable(String) CODEC(ZSTD(3))",
      "ALTER TABLE passk.`trials` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `error_message` Nullable(String) CODEC(ZSTD(3))",
    ]);
    // Migration 9, before it: the traces' revision, ids, latency, models and cost, local and distributed.
    expect(script.splice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`traces_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `revision` UInt32 DEFAULT 0.*`cost_usd` Nullable\(Float64\)$/,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`traces` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `revision`/),
    ]);
    for (const t of [...Object.values(TABLES).map((d) => d.name), 'production_windows']) {
      expect(
        all.filter((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS passk.\`${t}_local\` ON CLUSTER 'c'`)),
      ).toHaveLength(1);
      expect(
        all.filter((s) =>
          s.startsWith(`CREATE TABLE IF NOT EXISTS passk.\`${t}\` ON CLUSTER 'c' AS passk.\`${t}_local\``),
        ),
      ).toHaveLength(1);
    }
    // Migration 3 copies through the Distributed tables, so every shard's rows move.
    expect(script.at(-17)).toMatch(
      /^INSERT INTO `passk`\.`production_windows_v2` \(.*\) SELECT .* FROM `passk`\.`production_windows`$/,
    );
    expect(script.slice(-16, -12)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`dataset_rows_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `expected_checks` Nullable\(String\).*, ADD COLUMN IF NOT EXISTS `removed` Bool/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`dataset_rows` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `expected_checks`/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`traces_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `actions` Array\(Tuple\(tool String, arguments Nullable\(String\)\)\).*, ADD COLUMN IF NOT EXISTS `tokens_output` Nullable\(UInt32\)/,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`traces` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `actions`/),
    ]);
    // Migration 6 alters the local tables and the Distributed one alike (a missing pass rate is NULL; the late count).
    expect(script.slice(-12, -7)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2_local` ON CLUSTER 'c' MODIFY COLUMN `pass_rate` Nullable\(Float64\)/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2` ON CLUSTER 'c' MODIFY COLUMN `pass_rate` Nullable\(Float64\)/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `late` UInt64/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `late`/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2_local` ON CLUSTER 'c' UPDATE .* WHERE weight = 0/,
      ),
    ]);
    // Migration 7 alike: sampled may be NULL (unknown), the rule column, and its UPDATE of the rows not yet done.
    expect(script.slice(-7, -2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2_local` ON CLUSTER 'c' MODIFY COLUMN `sampled` Nullable\(UInt64\)$/,
      ),
      expect.stringMatching(/^ALTER TABLE passk\.`production_windows_v2` ON CLUSTER 'c' MODIFY COLUMN `sampled`/),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `sampled_rule` UInt8/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `sampled_rule`/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`production_windows_v2_local` ON CLUSTER 'c' UPDATE sampled = sampled \+ ungraded, sampled_rule = 1 WHERE sampled_rule = 0/,
      ),
    ]);
    // Migration 8: row_state's attempt records (a DEFAULT reading older rows' attempts) and tags, local and Distributed.
    expect(script.slice(-2)).toEqual([
      expect.stringMatching(
        /^ALTER TABLE passk\.`row_state_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `attempt_records` Array\(Tuple\(event_id String, .*\) DEFAULT arrayMap\(.*, attempts\) .*, ADD COLUMN IF NOT EXISTS `tags` Array\(LowCardinality\(String\)\)/,
      ),
      expect.stringMatching(
        /^ALTER TABLE passk\.`row_state` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `attempt_records`/,
      ),
    ]);
    expect(MIGRATIONS.map((m) => m.version)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    ]);
    expect(() => renderClusterTable(TABLES.trials, { cluster: 'c', database: 'bad-name' })).toThrow(RangeError);
  });
});
