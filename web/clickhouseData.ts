import { classTransitions } from '../sinks/clickhouse/queries/compare.ts';
import { runSources } from '../sinks/clickhouse/queries/runSources.ts';
import { DEFAULT_REPORT_OPTIONS } from '../processors/core/report.ts';
import {
  comparisonFromStore,
  reportFromStore,
  sharedRowCounts,
  type CountsSource,
  type Rounds,
} from '../sinks/clickhouse/queries/storeReport.ts';
import { datasetVersionChanges, datasetVersions } from '../sinks/clickhouse/queries/datasets.ts';
import { deadLetters } from '../sinks/clickhouse/queries/deadLetters.ts';
import { gateHistory } from '../sinks/clickhouse/queries/decisions.ts';
import { judgeCalibration } from '../sinks/clickhouse/queries/calibration.ts';
import { listVersions } from '../sinks/clickhouse/queries/histogram.ts';
import { alerts, productionWindows, traceWindows } from '../sinks/clickhouse/queries/production.ts';
import { loadTrialsForReport } from '../sinks/clickhouse/queries/report.ts';
import type { Querier } from '../sinks/clickhouse/queries/select.ts';
import type { DashboardData, DatasetRowView, ProductionWindow } from './data.ts';
import { traceListItem } from './traceItem.ts';
import { failureSignals } from '../processors/core/failureSignals.ts';
import { parseSignal, traceOfRow } from '../sinks/clickhouse/queries/storedFailures.ts';
import {
  confirmationsOf,
  datasetIds,
  datasetRowsOfTraces,
  failureCandidateSignals,
  repeatedInputFlips,
  sampledTraceCount,
  sampledTraces,
  storeWatermark,
  traceById,
  traceFacets,
  traceGraders,
} from './queries.ts';
import {
  keptCountedRows,
  keptRowFacets,
  rowPageFromStore,
  type CountedRowsSource,
  type FacetSource,
} from './storeRows.ts';
import { rowView } from './rowView.ts';

/**
 * The dashboard's data from the store (ClickHouse server or embedded chDB), through the typed queries of
 * sinks/clickhouse. The overview is `passk report`'s groups and the comparison `passk compare`'s document, built by
 * the core from per-row counts the store computes (storeReport.ts), so their numbers are the report's and compare's.
 */
const ALL_TIME = { from: 0, to: 8_640_000_000_000 };
const HOUR = 3_600_000;

const sizeOf = (ms: number): string =>
  ms % (24 * HOUR) === 0 ? `${ms / (24 * HOUR)}d` : ms % HOUR === 0 ? `${ms / HOUR}h` : `${Math.round(ms / 60_000)}m`;

const withoutId = <T extends { trace_id: string }>(x: T | undefined): Omit<T, 'trace_id'> | null => {
  if (!x) return null;
  const { trace_id: _, ...rest } = x;
  return rest;
};

/**
 * `watermark`: the store's write position (`storeWatermark` by default). `counts`: the per-row counts of the overview
 * and the comparison; by default one answer shared by both while the watermark stays (`sharedRowCounts`). `facets`:
 * the Rows pages' filter lists; by default computed once per scope while the watermark stays (`keptRowFacets`).
 * `rowCounts`: the Rows pages' per-row counts; by default computed once per scope and needs while the watermark
 * stays (`keptCountedRows`), so a page turn, filter or sort does not count every trial again. `rounds`: the adaptive
 * runs' first stages from their rounds on the event log (`readAdaptiveRounds`), for the Overview's and the Compare
 * view's headline numbers of an adaptive version, as `passk compare --from-store` reads them; none (the default
 * `--first-k`) without a log.
 */
/**
 * The adaptive runs' first stages read from the event log by `read` (`readAdaptiveRounds`), read again only once the
 * store's watermark moves (a run's rounds are on the log before its trials reach the store); none when the log
 * cannot be read: the default `--first-k` then applies, as for trial files, and the answers say it is assumed
 * (`first_stage_assumed` in /api/compare, `first_stage.assumed` in /api/overview; the Compare view's line names it).
 */
export const keptRounds = (watermark: () => Promise<string>, read: () => Promise<Rounds>): (() => Promise<Rounds>) => {
  let kept: { mark: string; rounds: Promise<Rounds> } | undefined;
  return async () => {
    const mark = await watermark();
    if (kept?.mark !== mark) kept = { mark, rounds: read().catch(() => new Map<string, number>() as Rounds) };
    return kept.rounds;
  };
};

export const clickhouseDashboardData = (
  client: Querier,
  watermark: () => Promise<string> = () => storeWatermark(client),
  counts: CountsSource = sharedRowCounts(client, watermark),
  facets: FacetSource = keptRowFacets(watermark),
  rowCounts: CountedRowsSource = keptCountedRows(watermark),
  rounds: () => Promise<Rounds> = () => Promise.resolve(new Map()),
): DashboardData => ({
  watermark,
  groups: async () =>
    (await listVersions(client)).map(({ suite, dataset_version, agent_version, rows, trials, last_at }) => ({
      suite,
      dataset_version,
      agent_version,
      rows,
      trials,
      last_at,
    })),
  // the rounds (the event log's, the first time in a process: its modules loaded and the log opened) are read while
  // the store counts, not before: the cold answer waits for the slower of the two
  overview: (scope) => reportFromStore(client, scope, DEFAULT_REPORT_OPTIONS, counts, rounds()),
  compare: async (q) => {
    const scope = { suite: q.suite, dataset_version: q.dataset_version, baseline: q.baseline, candidate: q.candidate };
    const [cmp, transitions, sources] = await Promise.all([
      comparisonFromStore(client, scope, DEFAULT_REPORT_OPTIONS, counts, rounds()),
      classTransitions(client, { ...scope, mustNotBreakOnly: true }),
      runSources(client, { ...scope, versions: [q.baseline, q.candidate] }),
    ]);
    if (!cmp) return null;
    const mnb = [...transitions.regressions, ...transitions.improvements]
      .filter((r) => r.must_not_break)
      .map((r) => r.row_id);
    return { ...cmp, must_not_break_rows: mnb, run_sources: sources };
  },
  row: async (q) =>
    rowView(
      q,
      await loadTrialsForReport(client, {
        suites: [q.suite],
        datasetVersions: [q.dataset_version],
        rowIds: [q.row_id],
        agentVersions: [...q.versions],
      }),
    ),
  rows: (q) => rowPageFromStore(client, q, facets, rowCounts),
  gates: async (q) =>
    (await gateHistory(client, q.suite === undefined ? {} : { suite: q.suite })).map((g) => ({
      gate_id: g.gate_id,
      occurred_at: g.occurred_at,
      suite: g.suite,
      dataset_version: g.dataset_version,
      baseline: g.baseline,
      candidate: g.candidate,
      verdict: g.verdict,
      reasons: g.reasons.map(({ rule, passed, detail, rows }) => ({ rule, passed, detail, rows })),
      evidence_rows: g.evidence_rows,
      repeated_verdict: g.repeated_verdict || g.verdict_number > 1,
      ...(g.adaptive_attempts !== null && g.adaptive_rows !== null && g.adaptive_max_k !== null
        ? {
            adaptive: {
              attempts: g.adaptive_attempts,
              ...(g.adaptive_confirmations === null ? {} : { confirmations: g.adaptive_confirmations }),
              rows: g.adaptive_rows,
              max_k: g.adaptive_max_k,
            },
          }
        : {}),
      unprotected: g.unprotected.map(({ suite, dataset_version, row_id, class: cls, c, n }) => ({
        suite,
        dataset_version,
        row_id,
        baseline: { class: cls, c, n },
      })),
    })),
  production: async () => {
    const [windows, raised, graders] = await Promise.all([
      productionWindows(client, ALL_TIME),
      alerts(client, ALL_TIME),
      traceGraders(client),
    ]);
    const grader = graders[0];
    const flips = grader ? await repeatedInputFlips(client, { grader }) : [];
    // Until the processors have written windows, show the plain weighted rate per hour from the traces (no interval).
    const fallback =
      windows.length === 0 && grader
        ? (await traceWindows(client, { ...ALL_TIME, windowMs: HOUR, grader })).map((w): ProductionWindow => ({
            agent_version: w.agent_version,
            segment: w.segment,
            grader,
            size: '1h',
            start: w.window_start,
            end: w.window_start + HOUR,
            traces: w.sampled,
            graded: w.graded,
            pass_rate: w.pass_rate,
            interval: null,
            late: null,
          }))
        : [];
    return {
      windows: [
        ...fallback,
        ...windows.map((w): ProductionWindow => ({
          agent_version: w.agent_version,
          segment: w.segment,
          grader: w.grader,
          size: sizeOf(w.window_end - w.window_start),
          start: w.window_start,
          end: w.window_end,
          traces: w.sampled,
          graded: w.sampled === null ? null : w.sampled - w.ungraded,
          pass_rate: w.pass_rate,
          interval: w.ci_low === null || w.ci_high === null ? null : [w.ci_low, w.ci_high],
          late: w.late,
        })),
      ],
      alerts: raised,
      repeated_input_flips: flips.map((f) => ({
        input_fingerprint: f.input_fingerprint,
        agent_version: f.agent_version,
        traces: f.traces,
        verdicts: { pass: f.passed, fail: f.failed },
        trace_ids: f.trace_ids,
      })),
    };
  },
  deadLetters: () => deadLetters(client),
  trace: async (q) => {
    const [t, [c], [row]] = await Promise.all([
      traceById(client, q.trace_id),
      confirmationsOf(client, [q.trace_id]),
      datasetRowsOfTraces(client, [q.trace_id]),
    ]);
    return t ? { ...t, confirmation: withoutId(c), dataset_row: withoutId(row) } : null;
  },
  traces: async (q) => {
    const limit = q.limit ?? 200;
    const offset = q.offset ?? 0;
    const filters = {
      ...q,
      userId: q.user_id,
      sessionId: q.session_id,
      minLatencyMs: q.min_latency_ms,
      failed: q.failed ?? false,
    };
    // Without `failed`, the page and the total in SQL. With it, which candidates are failures is decided here
    // (failureSignals): over their signals alone (no payloads), then the page's traces by id.
    const page = async (): Promise<{ rows: Awaited<ReturnType<typeof sampledTraces>>; total: number }> => {
      if (!filters.failed) {
        const [rows, total] = await Promise.all([
          sampledTraces(client, { ...filters, limit, offset }),
          sampledTraceCount(client, filters),
        ]);
        return { rows, total };
      }
      const failures = (await failureCandidateSignals(client, filters)).filter(
        (c) =>
          failureSignals({
            verdicts: c.failed_graders.map((grader) => ({ grader, passed: false })),
            ...(c.error_kind !== null ? { error_kind: c.error_kind } : {}),
            user_signals: Object.fromEntries(Object.entries(c.user_signals).map(([k, v]) => [k, parseSignal(v)])),
          }).length > 0,
      );
      const ids = failures.slice(offset, offset + limit).map((c) => c.trace_id);
      const rows =
        ids.length === 0 ? [] : await sampledTraces(client, { ...filters, ids, limit: ids.length, offset: 0 });
      return { rows, total: failures.length };
    };
    const [{ rows, total }, [facets], datasets] = await Promise.all([page(), traceFacets(client), datasetIds(client)]);
    const ids = rows.map((r) => r.trace_id);
    const [confirmations, became] = await Promise.all([confirmationsOf(client, ids), datasetRowsOfTraces(client, ids)]);
    const confirmedOf = new Map(confirmations.map((c) => [c.trace_id, withoutId(c)]));
    const rowOf = new Map(became.map((r) => [r.trace_id, withoutId(r)]));
    const traces = rows.map((r) =>
      traceListItem(traceOfRow(r), {
        user_signals: r.user_signals,
        confirmation: confirmedOf.get(r.trace_id) ?? null,
        dataset_row: rowOf.get(r.trace_id) ?? null,
      }),
    );
    return {
      traces,
      offset,
      total,
      agent_versions: facets?.agent_versions ?? [],
      segments: facets?.segments ?? [],
      datasets,
    };
  },
  judges: () => judgeCalibration(client),
  datasets: async () => {
    const out = [];
    for (const dataset_id of await datasetIds(client)) {
      const [versions, changes] = await Promise.all([
        datasetVersions(client, { dataset_id }),
        datasetVersionChanges(client, { dataset_id }),
      ]);
      for (const v of versions) {
        const changed = changes.filter((r) => r.dataset_version === v.dataset_version);
        const rows = changed.filter((r) => r.must_not_break);
        const view = (r: (typeof rows)[number]): DatasetRowView => ({
          row_id: r.row_id,
          tags: r.tags,
          expected: r.expected,
          provenance: {
            kind: r.provenance.kind,
            ...(r.provenance.trace_id ? { trace_id: r.provenance.trace_id } : {}),
            ...(r.provenance.note ? { note: r.provenance.note } : {}),
          },
        });
        out.push({
          dataset_id,
          dataset_version: v.dataset_version,
          created_at: v.first_at,
          rows: v.rows,
          removed: changed
            .filter((r) => r.removed)
            .map((r) => r.row_id)
            .sort(),
          must_not_break: rows.map(view),
          from_production: rows.filter((r) => r.provenance.kind === 'production_failure').map(view),
        });
      }
    }
    return out;
  },
});
