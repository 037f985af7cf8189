import { DEFAULT_REPORT_OPTIONS, flippingChecks, rowState, summarizeAttempts } from '../processors/core/index.ts';
import type { ExplorerTrial } from '../sinks/clickhouse/queries/explorerCounts.ts';
import type { ExplorerRow, ExplorerView, Scope } from './data.ts';

const mean = (xs: readonly number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * Every row of one scope, one line each, with per version what the explorer shows: class, passes over graded
 * attempts, the intermediate checks whose answers flip, whether the outputs differ, failure categories and the mean
 * latency and cost. Classes come from the same fold and summary as `passk report`, over every recorded attempt.
 * A trial needs only what the explorer reads (`ExplorerTrial`: a TrialRecorded is one).
 */
export const explorerView = (scope: Scope, trials: readonly ExplorerTrial[]): ExplorerView => {
  const mine = trials.filter((t) => t.suite === scope.suite && t.dataset_version === scope.dataset_version);
  const versions = [...new Set(mine.map((t) => t.agent.version))].sort();
  const byRow = new Map<string, ExplorerTrial[]>();
  for (const t of mine) byRow.set(t.row_id, [...(byRow.get(t.row_id) ?? []), t]);
  const checks = new Set<string>();
  const categories = new Set<string>();
  const rows: ExplorerRow[] = [...byRow.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([row_id, ts]) => {
      const tags = [...new Set(ts.flatMap((t) => t.tags ?? []))].sort();
      const perVersion: ExplorerRow['versions'] = {};
      for (const v of versions) {
        const vt = ts.filter((t) => t.agent.version === v);
        if (vt.length === 0) continue;
        const state = vt.reduce(rowState.evolve, rowState.initial());
        const s = summarizeAttempts(row_id, state.attempts, state.tags, DEFAULT_REPORT_OPTIONS);
        const cats = [...new Set(vt.flatMap((t) => (t.failure_category ? [t.failure_category] : [])))].sort();
        for (const t of vt) for (const c of t.checks ?? []) checks.add(c.name);
        for (const c of cats) categories.add(c);
        perVersion[v] = {
          class: s.class,
          n: s.n,
          c: s.c,
          attempts: vt.length,
          flipping_checks: flippingChecks(s),
          output_flip: s.outputs_differ,
          failure_categories: cats,
          outputs: [...new Set(vt.flatMap((t) => (t.output == null ? [] : [t.output])))],
          mean_latency_ms: mean(vt.flatMap((t) => (t.latency_ms === undefined ? [] : [t.latency_ms]))),
          mean_cost_usd: mean(vt.flatMap((t) => (t.cost_usd === undefined ? [] : [t.cost_usd]))),
        };
      }
      const first = ts.find((t) => t.input !== undefined) ?? ts[0]!;
      return {
        row_id,
        input: first.input ?? null,
        expected: ts.find((t) => t.expected != null)?.expected ?? null,
        tags,
        must_not_break: tags.includes('must_not_break'),
        versions: perVersion,
      };
    });
  return {
    suite: scope.suite,
    dataset_version: scope.dataset_version,
    versions,
    checks: [...checks],
    failure_categories: [...categories].sort(),
    rows,
  };
};
