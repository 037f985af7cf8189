import { diffWords } from 'diff';
import { DEFAULT_REPORT_OPTIONS, firstDivergentCheck, summarizeAttempts, rowState } from '../processors/core/index.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import type { DiffPart, RowDrillDown, Scope } from './data.ts';

/** Attempt i of the baseline next to attempt i of the candidate, with jsdiff's word-level diff of their outputs. */
const align = (base: readonly TrialRecorded[], cand: readonly TrialRecorded[]): RowDrillDown['aligned'] =>
  Array.from({ length: Math.max(base.length, cand.length) }, (_, index) => {
    const x = base[index];
    const y = cand[index];
    const diff: DiffPart[] | null =
      x?.output != null && y?.output != null
        ? diffWords(x.output, y.output).map((p) => ({ value: p.value, added: !!p.added, removed: !!p.removed }))
        : null;
    return { index, baseline: x ? index : null, candidate: y ? index : null, diff };
  });

/**
 * One row under a few versions, from its trials: every attempt's output and checks, each version's class over all
 * its attempts, and the first intermediate check whose answers differ between the first two versions.
 */
export const rowView = (
  q: Scope & { row_id: string; versions: readonly string[] },
  trials: readonly TrialRecorded[],
): RowDrillDown | null => {
  const mine = trials.filter(
    (t) => t.suite === q.suite && t.dataset_version === q.dataset_version && t.row_id === q.row_id,
  );
  const first = mine[0];
  if (!first) return null;
  const versions = q.versions.map((v) => {
    const ts = mine.filter((t) => t.agent.version === v);
    const state = ts.reduce(rowState.evolve, rowState.initial());
    const summary = summarizeAttempts(q.row_id, state.attempts, state.tags, DEFAULT_REPORT_OPTIONS);
    const order = new Map(state.attempts.map((a, i) => [a.event_id, i]));
    const sorted = [...ts].sort((a, b) => (order.get(a.event_id) ?? 0) - (order.get(b.event_id) ?? 0));
    return { v, sorted, summary };
  });
  const [a, b] = versions;
  return {
    suite: q.suite,
    dataset_version: q.dataset_version,
    row_id: q.row_id,
    input: first.input ?? null,
    expected: first.expected ?? null,
    tags: [...new Set(mine.flatMap((t) => t.tags ?? []))].sort(),
    versions: versions.map(({ v, sorted, summary }) => ({
      agent_version: v,
      class: summary.class,
      n: summary.n,
      c: summary.c,
      attempts: sorted.map((t) => ({
        event_id: t.event_id,
        run_id: t.run_id,
        attempt: t.attempt,
        occurred_at: t.occurred_at,
        passed: t.passed,
        output: t.output ?? null,
        checks: t.checks ?? [],
        failure_category: t.failure_category ?? null,
        latency_ms: t.latency_ms ?? null,
        cost_usd: t.cost_usd ?? null,
        tokens: t.tokens ?? null,
        actions: t.actions ?? [],
        retrieved_refs: t.retrieved_refs ?? [],
      })),
    })),
    first_divergence: a && b ? firstDivergentCheck(a.summary, b.summary) : null,
    aligned: align(a?.sorted ?? [], b?.sorted ?? []),
  };
};
