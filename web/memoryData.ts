import {
  buildReport,
  calibrateJudges,
  compareVersions,
  declaredRunsOf,
  DEFAULT_REPORT_OPTIONS,
  groupTrials,
  type Group,
} from '../processors/core/index.ts';
import type { PasskEvent } from '../schemas/events/index.ts';
import type { GateEvaluated, JudgmentRecorded, LabelRecorded, TraceSampled } from '../schemas/events/index.ts';
import { evolveDataset, rowsAt, type DatasetRow, type DatasetState } from '../processors/core/datasets.ts';
import type { DashboardData, DatasetVersionView, Scope, TraceListItem } from './data.ts';
import { traceListItem } from './traceItem.ts';
import type { RunSource } from '../sinks/clickhouse/queries/runSources.ts';
import { explorerView } from './explorerView.ts';
import { rowPage } from './rowPage.ts';
import { rowView } from './rowView.ts';
import { KEY_SEP } from '../schemas/topics.ts';
import { maxOf, pushAll } from '../processors/core/arrays.ts';

/**
 * The dashboard's data over events held in memory, computed with the same pure core as every other surface.
 * For tests and for looking at a handful of events without a store; a deployment reads the store
 * (`clickhouseDashboardData`).
 */
export const createMemoryDashboardData = (initial: readonly PasskEvent[] = []) => {
  const events: PasskEvent[] = [...initial];
  const of = <T extends PasskEvent['type']>(type: T) =>
    events.filter((e): e is Extract<PasskEvent, { type: T }> => e.type === type);
  const groups = (): Group[] => groupTrials(of('TrialRecorded'));
  const groupOf = (scope: Scope, version: string) =>
    groups().find(
      (g) =>
        g.key.suite === scope.suite &&
        g.key.dataset_version === scope.dataset_version &&
        g.key.agent_version === version,
    );

  const traceItem = (t: TraceSampled): TraceListItem => {
    const c = of('FailureConfirmed').find((x) => x.trace_id === t.trace_id);
    const row = of('DatasetRowUpserted').find((r) => r.provenance.trace_id === t.trace_id);
    return traceListItem(t, {
      user_signals: Object.fromEntries(Object.entries(t.user_signals ?? {}).map(([k, v]) => [k, String(v)])),
      confirmation: c
        ? {
            event_id: c.event_id,
            dataset_id: c.dataset_id,
            reviewer: c.reviewer,
            expected: c.expected,
            note: c.note ?? null,
            occurred_at: c.occurred_at,
          }
        : null,
      dataset_row: row
        ? { dataset_id: row.dataset_id, dataset_version: row.dataset_version, row_id: row.row_id }
        : null,
    });
  };

  const data: DashboardData = {
    watermark: async () => String(events.length),
    groups: async () =>
      groups().map((g) => {
        const trials = of('TrialRecorded').filter(
          (t) =>
            t.suite === g.key.suite &&
            t.dataset_version === g.key.dataset_version &&
            t.agent.version === g.key.agent_version,
        );
        return {
          ...g.key,
          rows: g.rows.size,
          trials: trials.length,
          last_at: maxOf(trials.map((t) => t.occurred_at)),
        };
      }),
    overview: async (scope) =>
      buildReport(
        groups().filter((g) => g.key.suite === scope.suite && g.key.dataset_version === scope.dataset_version),
        { ...DEFAULT_REPORT_OPTIONS, declared: declaredRunsOf(of('RunFinished')) },
      ).groups,
    compare: async (q) => {
      const b = groupOf(q, q.baseline);
      const c = groupOf(q, q.candidate);
      if (!b || !c) return null;
      const cmp = compareVersions(
        {
          suite: q.suite,
          dataset_version: q.dataset_version,
          baseline: { version: q.baseline, rows: b.rows },
          candidate: { version: q.candidate, rows: c.rows },
        },
        { ...DEFAULT_REPORT_OPTIONS, declared: declaredRunsOf(of('RunFinished')) },
      );
      const mnb = [
        ...new Set([...b.rows, ...c.rows].filter(([, s]) => s.tags.includes('must_not_break')).map(([id]) => id)),
      ];
      // the latest RunFinished of each version that recorded its dataset file and agent (passk run), as the store's
      const sources: Record<string, RunSource> = {};
      for (const version of [q.baseline, q.candidate]) {
        const runs = of('RunFinished').filter(
          (r) =>
            r.suite === q.suite &&
            r.dataset_version === q.dataset_version &&
            r.agent.version === version &&
            r.dataset_path &&
            r.agent_spec,
        );
        const latest = runs.sort((x, y) => y.occurred_at - x.occurred_at)[0];
        if (latest) sources[version] = { dataset_path: latest.dataset_path!, agent_spec: latest.agent_spec! };
      }
      return { ...cmp, must_not_break_rows: mnb, run_sources: sources };
    },
    row: async (q) => rowView(q, of('TrialRecorded')),
    rows: async (q) => rowPage(explorerView(q, of('TrialRecorded')), q),
    gates: async (q) =>
      of('GateEvaluated')
        .filter((g: GateEvaluated) => q.suite === undefined || g.suite === q.suite)
        .sort((a, b) => b.occurred_at - a.occurred_at)
        .map((g) => ({
          gate_id: g.gate_id,
          occurred_at: g.occurred_at,
          suite: g.suite,
          dataset_version: g.dataset_version,
          baseline: g.baseline,
          candidate: g.candidate,
          verdict: g.verdict,
          reasons: g.reasons.map((r) => ({ ...r, rows: r.rows ?? [] })),
          evidence_rows: g.evidence.length,
          repeated_verdict: g.repeated_verdict === true,
          ...(g.adaptive ? { adaptive: { ...g.adaptive } } : {}),
          unprotected: (g.must_not_break ?? [])
            .filter((m) => m.status === 'not_covered')
            .map(({ suite, dataset_version, row_id, baseline: { class: cls, c, n } }) => ({
              suite,
              dataset_version,
              row_id,
              baseline: { class: cls, c, n },
            })),
        })),
    production: async () => ({ windows: [], alerts: [], repeated_input_flips: [] }),
    // the events alone hold no dead letters: those are records that never became events
    deadLetters: async () => ({ total: 0, by_stage: {}, letters: [] }),
    trace: async (q) => {
      const t = of('TraceSampled')
        .filter((x) => x.trace_id === q.trace_id)
        .sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0))[0];
      return t ? { ...traceItem(t), input_fingerprint: t.input_fingerprint } : null;
    },
    traces: async (q) => {
      // One per trace: its latest revision.
      const latest = new Map<string, TraceSampled>();
      for (const t of of('TraceSampled') as TraceSampled[])
        if ((t.revision ?? 0) >= (latest.get(t.trace_id)?.revision ?? -1)) latest.set(t.trace_id, t);
      const all = [...latest.values()];
      const offset = q.offset ?? 0;
      const listed = all
        .filter(
          (t) =>
            (q.agent_version === undefined || t.agent_version === q.agent_version) &&
            (q.segment === undefined || t.segment === q.segment) &&
            (q.user_id === undefined || t.user_id === q.user_id) &&
            (q.session_id === undefined || t.session_id === q.session_id) &&
            (q.model === undefined || t.model === q.model || t.response_model === q.model) &&
            (q.min_latency_ms === undefined || (t.latency_ms ?? -1) >= q.min_latency_ms) &&
            t.occurred_at >= (q.from ?? 0) &&
            t.occurred_at < (q.to ?? Infinity),
        )
        .sort((a, b) => b.occurred_at - a.occurred_at || a.trace_id.localeCompare(b.trace_id))
        .map(traceItem)
        .filter((t) => !q.failed || t.why.length > 0);
      return {
        traces: listed.slice(offset, offset + (q.limit ?? 200)),
        offset,
        total: listed.length,
        agent_versions: [...new Set(all.map((t) => t.agent_version))].sort(),
        segments: [...new Set(all.map((t) => t.segment))].sort(),
        datasets: [...new Set(of('DatasetRowUpserted').map((r) => r.dataset_id))].sort(),
      };
    },
    judges: async () =>
      calibrateJudges(of('JudgmentRecorded') as JudgmentRecorded[], of('LabelRecorded') as LabelRecorded[]),
    datasets: async () => {
      // Folded as the dataset processor folds passk.datasets: versions are cumulative, removals drop rows.
      const states = new Map<string, DatasetState>();
      const createdAt = new Map<string, number>();
      for (const r of of('DatasetRowUpserted')) {
        states.set(r.dataset_id, evolveDataset(states.get(r.dataset_id), r, 'passk-dashboard').state);
        const key = `${r.dataset_id}${KEY_SEP}${r.dataset_version}`;
        createdAt.set(key, Math.min(createdAt.get(key) ?? Infinity, r.occurred_at));
      }
      return [...states.values()].flatMap((s) =>
        s.versions.map((version, i): DatasetVersionView => {
          const at = rowsAt(s, version);
          const before = i === 0 ? new Map() : rowsAt(s, s.versions[i - 1]);
          const view = ([row_id, r]: [string, DatasetRow]) => ({
            row_id,
            tags: r.tags,
            expected: r.expected,
            provenance: {
              kind: r.provenance.kind,
              ...(r.provenance.trace_id ? { trace_id: r.provenance.trace_id } : {}),
              ...(r.provenance.note ? { note: r.provenance.note } : {}),
            },
          });
          const rows = [...at].sort(([a], [b]) => (a < b ? -1 : 1));
          return {
            dataset_id: s.dataset_id,
            dataset_version: version,
            created_at: createdAt.get(`${s.dataset_id}${KEY_SEP}${version}`) ?? null,
            rows: at.size,
            removed: [...before.keys()].filter((id) => !at.has(id)).sort(),
            must_not_break: rows.filter(([, r]) => r.tags.includes('must_not_break')).map(view),
            from_production: rows.filter(([, r]) => r.provenance.kind === 'production_failure').map(view),
          };
        }),
      );
    },
  };
  return { data, append: (more: readonly PasskEvent[]) => void pushAll(events, more) };
};
