import type { Comparison, GroupReport, Interval } from '../processors/core/index.ts';
import type { DatasetRow } from '../producers/runner/dataset.ts';
import { createTraceSampler } from '../producers/sampler/index.ts';
import { createRecorder } from '../producers/sdk/recorder.ts';
import { datasetRows, datasetVersions } from '../sinks/clickhouse/queries/datasets.ts';
import type { DatasetRowUpserted, FailureConfirmed } from '../schemas/events/datasets.ts';
import type { GateEvaluated } from '../schemas/events/decisions.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { BASELINE, CANDIDATE, FIXED, type AgentVersion } from './agents.ts';
import { DEMO_DATASET_ID, DEMO_SEED, loadDemoDataset } from './dataset/demoRow.ts';
import { simulateJudgments } from './judges.ts';
import type { DemoPipeline } from './pipeline.ts';
import { findPlantedFailure, SAMPLING_POLICY, simulateProduction } from './production.ts';
import {
  comparisonFromStore,
  DEMO_SUITE,
  gateByProcessors,
  PRODUCER,
  runVersion,
  toRunnerRow,
  type DemoOptions,
  type ProcessorsGate,
} from './runDemo.ts';

/**
 * The whole demo, the seed's steps in order, through the real pipeline (runner → log → processors → store):
 *  1. label the rows and tag must-not-break rows up front (the committed dataset);
 *  2–4. run the baseline and the candidate 3 times on every row, saving every intermediate check;
 *  5–6. the three numbers side by side, and the two lists;
 *  7. declare the comparison; the processors ask for confirmation runs of both versions on each suspected
 *     regression, the demo runs exactly those, and the processors decide the gate (their GateEvaluated, as
 *     `passk gate --declare --wait` awaits it); the first divergent check of each confirmed regression;
 *  then sampled production traffic, one confirmed failure that becomes a must-not-break row in a new dataset version,
 *  and the next gate, declared and decided the same way, which picks it up.
 */
export const DATASET_V1 = 'v1';

export type Headline = { value: number | null; interval: Interval | null };
export type VersionNumbers = {
  agent_version: string;
  rows: number;
  trials: number;
  attempts_per_row: number | null;
  mean_accuracy: Headline;
  pass_at_1: Headline;
  pass_hat_k: Headline & { k: number };
  flip_rate: Headline;
  classes: GroupReport['classes'];
};

/** A gate the processors decided: their GateEvaluated (`event_id`) on the declared comparison (`gate_id`). */
export type GateSummary = {
  gate_id: string;
  event_id: string;
  dataset_version: string;
  baseline: string;
  candidate: string;
  verdict: 'pass' | 'fail';
  reasons: { rule: string; passed: boolean; detail: string; rows: string[] }[];
  must_not_break_rows: number;
  /** The must-not-break rows the gate cannot protect (the baseline is not stable-correct on them), as judged. */
  not_protected: NonNullable<GateEvaluated['must_not_break']>;
  /** The processors' ConfirmationRequested that the demo ran, or null when they asked for none. */
  confirmation: {
    event_id: string;
    run_id: string;
    rows: string[];
    attempts: number;
    /** The must-not-break rows among them, and the attempts each was asked for instead (more). */
    must_not_break: { rows: string[]; attempts: number } | null;
  } | null;
};

export type DemoResult = {
  seed: number;
  suite: string;
  dataset: { id: string; version: string; rows: number; must_not_break: number };
  baseline: string;
  candidate: string;
  k: number;
  numbers: VersionNumbers[];
  became_stable_correct: string[];
  lost_stable_correct: string[];
  regressions: {
    row_id: string;
    must_not_break: boolean;
    outcome: string;
    baseline: { n: number; c: number };
    candidate: { n: number; c: number };
    first_divergent_check: string | null;
    first_divergence: Comparison['confirmation']['rows'][number]['first_divergence'];
  }[];
  gate: GateSummary;
  production: {
    agent_version: string;
    requests: number;
    sampled: number;
    failed_sampled: number;
    repeated_inputs_that_flipped: number;
    confirmed_failure: {
      trace_id: string;
      expected: string;
      output: string;
      row_id: string | null;
      dataset_version: string | null;
    };
  };
  /** Null when there is no next gate (the confirmed failure reached no new dataset version). */
  next_gate:
    | (GateSummary & {
        picked_up: { row_id: string; status: string | null; baseline: string | null; candidate: string | null } | null;
      })
    | null;
  judges: { judgments: number; labels: number };
  events: { trials: number; traces: number };
  wall_ms: number;
};

const headline = (value: number | null | undefined, interval: Interval | null | undefined): Headline => ({
  value: value ?? null,
  interval: interval ?? null,
});

export const versionNumbers = (g: GroupReport, k: number): VersionNumbers => ({
  agent_version: g.agent_version,
  rows: g.rows,
  trials: g.trials,
  attempts_per_row: g.attempts_per_row.min,
  mean_accuracy: headline(g.mean_accuracy, g.intervals.mean_accuracy.clustered),
  pass_at_1: headline(g.pass_at_1, g.intervals.pass_at_k['1']),
  pass_hat_k: { k, ...headline(g.pass_hat_k[String(k)], g.intervals.pass_hat_k[String(k)]) },
  flip_rate: headline(g.flip_rate, g.intervals.flip_rate.bootstrap),
  classes: g.classes,
});

const gateSummary = (gate: ProcessorsGate): GateSummary => {
  const { verdict: v, confirmation: c } = gate;
  return {
    gate_id: v.gate_id,
    event_id: v.event_id,
    dataset_version: v.dataset_version,
    baseline: v.baseline,
    candidate: v.candidate,
    verdict: v.verdict,
    reasons: v.reasons.map((r) => ({ rule: r.rule, passed: r.passed, detail: r.detail, rows: r.rows ?? [] })),
    must_not_break_rows: v.must_not_break?.length ?? 0,
    not_protected: (v.must_not_break ?? []).filter((m) => m.status === 'not_covered'),
    confirmation: c
      ? {
          event_id: c.event_id,
          run_id: c.run_id,
          rows: c.rows,
          attempts: c.attempts,
          must_not_break: c.must_not_break ?? null,
        }
      : null,
  };
};

/** A must-not-break row as the processors' verdict judged it. */
const judged = (v: GateEvaluated, rowId: string) => v.must_not_break?.find((m) => m.row_id === rowId);

const HOUR = 3_600_000;

export const runDemo = async (pipeline: DemoPipeline, opts: DemoOptions = {}): Promise<DemoResult> => {
  const started = Date.now();
  const clock = opts.clock ?? Date.now;
  const seed = opts.seed ?? DEMO_SEED;
  const k = opts.k ?? 3;
  const confirmAttempts = opts.confirmAttempts ?? 6;
  const mnbExtra = opts.mustNotBreakExtra ?? 3;
  const concurrency = opts.concurrency ?? 16;
  const progress = opts.onProgress;
  const recorder = createRecorder({ publisher: pipeline.log.publisher, producer: PRODUCER, clock });
  let trials = 0;
  const counted = async (p: ReturnType<typeof runVersion>) => {
    const s = await p;
    trials += s.done;
    return s;
  };

  try {
    // Step 1: the labeled dataset, must-not-break rows tagged before any result is seen.
    const dataset = loadDemoDataset();
    const at0 = clock();
    const upserts: DatasetRowUpserted[] = dataset.map((r, i) => ({
      event_id: deterministicEventId(at0, DEMO_DATASET_ID, DATASET_V1, r.row_id),
      type: 'DatasetRowUpserted',
      schema_version: 1,
      occurred_at: at0 + i,
      producer: PRODUCER,
      dataset_id: DEMO_DATASET_ID,
      dataset_version: DATASET_V1,
      row_id: r.row_id,
      input: r.input,
      expected: r.expected,
      tags: r.tags,
      provenance: { kind: 'manual', note: 'demo/dataset/refund-review.jsonl' },
    }));
    await pipeline.log.publisher.publish(upserts);
    progress?.({ stage: 'dataset', label: `${dataset.length} rows`, done: dataset.length, total: dataset.length });
    const rows = dataset.map(toRunnerRow);
    const mnbIds = new Set(dataset.filter((r) => r.tags.includes('must_not_break')).map((r) => r.row_id));

    // Steps 2–4: every row, k times, both versions.
    const run = (
      version: AgentVersion,
      stage: 'baseline' | 'candidate' | 'next-gate',
      rs: readonly DatasetRow[],
      dv: string,
    ) =>
      counted(
        runVersion({
          recorder,
          version,
          rows: rs,
          datasetVersion: dv,
          runId: `${version}-${dv}-screen`,
          k,
          concurrency,
          stage,
          ...(progress ? { onProgress: progress } : {}),
          clock,
        }),
      );
    await run(BASELINE, 'baseline', rows, DATASET_V1);
    await run(CANDIDATE, 'candidate', rows, DATASET_V1);

    // Judge calibration data for the Judges view (a judge grades the explanations; a support lead labels them).
    const { judgments, labels } = simulateJudgments({ seed });
    for (const j of judgments) void recorder.recordJudgment(j);
    for (const l of labels) void recorder.recordLabel(l);
    await recorder.flush();
    progress?.({
      stage: 'judges',
      label: 'judge calibration',
      done: judgments.length + labels.length,
      total: judgments.length + labels.length,
    });
    await pipeline.settle();

    // Step 7: the gate as the product ships it. The demo declares the comparison; the processors ask for
    // confirmation runs on the suspected regressions (rows stable-correct on the baseline, not on the candidate);
    // the demo runs exactly those, and the processors decide. Then the comparison the store holds, for the lists.
    const gate = async (baseline: AgentVersion, candidate: AgentVersion, dv: string, rs: readonly DatasetRow[]) => {
      const decided = await gateByProcessors(pipeline, {
        datasetVersion: dv,
        baseline,
        candidate,
        rows: rs,
        confirmationAttempts: confirmAttempts,
        mustNotBreakExtraAttempts: mnbExtra,
        clock,
        runConfirmation: (version, request, rows) =>
          counted(
            runVersion({
              recorder,
              version,
              rows,
              datasetVersion: dv,
              runId: request.run_id,
              k: request.attempts,
              ...(request.must_not_break
                ? {
                    confirm: {
                      rows: request.must_not_break.rows,
                      extra: request.must_not_break.attempts - request.attempts,
                    },
                  }
                : {}),
              concurrency,
              stage: 'confirmation',
              ...(progress ? { onProgress: progress } : {}),
              clock,
            }),
          ),
      });
      await pipeline.settle();
      const comparison = await comparisonFromStore(pipeline, { datasetVersion: dv, baseline, candidate });
      return { ...decided, comparison };
    };
    const first = await gate(BASELINE, CANDIDATE, DATASET_V1, rows);
    const cmp = first.comparison;

    // Production: a day of the live version's traffic through the SDK's trace sampler, and the one confirmed failure.
    const startMs = Math.floor(clock() / HOUR) * HOUR - 24 * HOUR;
    const traffic = simulateProduction({ version: BASELINE, startMs, seed });
    const sampler = createTraceSampler({ policy: SAMPLING_POLICY, recorder, seed, clock });
    const kept = traffic.filter(
      (t) =>
        sampler.offer({
          trace_id: t.trace_id,
          agent_version: t.agent_version,
          segment: t.segment,
          input: t.input,
          output: t.output,
          verdicts: [{ grader: 'refund_audit', passed: t.output === t.expected }],
          user_signals: { resubmitted: t.resubmitted },
          occurred_at: t.at,
        }).kept === true,
    );
    await sampler.flush();
    progress?.({
      stage: 'production',
      label: `${kept.length} of ${traffic.length} requests sampled`,
      done: traffic.length,
      total: traffic.length,
    });
    const flips = new Map<string, Set<string>>();
    for (const t of kept) flips.set(t.input, (flips.get(t.input) ?? new Set()).add(t.output));

    // Review: a reviewer confirms the planted failure; the processors turn it into a must-not-break row.
    const plantedInput = findPlantedFailure(seed);
    const trace = kept.find((t) => t.input === plantedInput);
    if (!trace) throw new Error('the planted production failure was not sampled');
    const confirmedAt = clock();
    const failure: FailureConfirmed = {
      event_id: deterministicEventId(confirmedAt, 'failure', trace.trace_id),
      type: 'FailureConfirmed',
      schema_version: 1,
      occurred_at: confirmedAt,
      producer: PRODUCER,
      trace_id: trace.trace_id,
      dataset_id: DEMO_DATASET_ID,
      input: trace.input,
      expected: trace.expected,
      reviewer: 'support-lead',
      note: 'approved a refund for cosmetic wear on an opened item; the policy denies it',
    };
    await pipeline.log.publisher.publish([failure]);
    await pipeline.settle();
    const versions = await datasetVersions(pipeline.store, { dataset_id: DEMO_DATASET_ID });
    const latest = versions.at(-1);
    const v2 = latest && latest.dataset_version !== DATASET_V1 ? latest.dataset_version : null;
    const v2Rows = v2 ? await datasetRows(pipeline.store, { dataset_id: DEMO_DATASET_ID, dataset_version: v2 }) : [];
    const fromProduction = v2Rows.find((r) => r.provenance.trace_id === trace.trace_id) ?? null;
    progress?.({
      stage: 'review',
      label: fromProduction ? `${fromProduction.row_id} in dataset ${v2}` : 'no new dataset version',
      done: 1,
      total: 1,
    });

    // The next gate runs on the new dataset version, which holds the production row: the fix (prompt-v3).
    let next: DemoResult['next_gate'] = null;
    if (v2) {
      const byId = new Map(dataset.map((r) => [r.row_id, r]));
      const nextRows: DatasetRow[] = v2Rows.map((r) => {
        const known = byId.get(r.row_id);
        return known
          ? toRunnerRow(known)
          : { id: r.row_id, input: r.input, expected: r.expected ?? undefined, tags: r.tags };
      });
      await run(BASELINE, 'next-gate', nextRows, v2);
      await run(FIXED, 'next-gate', nextRows, v2);
      await pipeline.settle();
      const second = await gate(BASELINE, FIXED, v2, nextRows);
      const row = fromProduction ? judged(second.verdict, fromProduction.row_id) : undefined;
      next = {
        ...gateSummary(second),
        picked_up: fromProduction
          ? {
              row_id: fromProduction.row_id,
              status: row?.status ?? null,
              baseline: row?.baseline.class ?? null,
              candidate: row?.candidate.class ?? null,
            }
          : null,
      };
    }

    return {
      seed,
      suite: DEMO_SUITE,
      dataset: { id: DEMO_DATASET_ID, version: DATASET_V1, rows: dataset.length, must_not_break: mnbIds.size },
      baseline: BASELINE,
      candidate: CANDIDATE,
      k,
      numbers: [versionNumbers(cmp.baseline, k), versionNumbers(cmp.candidate, k)],
      became_stable_correct: cmp.became_stable_correct,
      lost_stable_correct: cmp.lost_stable_correct,
      regressions: cmp.confirmation.rows.map((s) => ({
        row_id: s.row_id,
        must_not_break: mnbIds.has(s.row_id),
        outcome: s.outcome,
        baseline: { n: s.baseline.n, c: s.baseline.c },
        candidate: { n: s.candidate.n, c: s.candidate.c },
        first_divergent_check: s.first_divergence?.check ?? null,
        first_divergence: s.first_divergence,
      })),
      gate: gateSummary(first),
      production: {
        agent_version: BASELINE,
        requests: traffic.length,
        sampled: kept.length,
        failed_sampled: kept.filter((t) => t.output !== t.expected).length,
        repeated_inputs_that_flipped: [...flips.values()].filter((s) => s.size > 1).length,
        confirmed_failure: {
          trace_id: trace.trace_id,
          expected: trace.expected,
          output: trace.output,
          row_id: fromProduction?.row_id ?? null,
          dataset_version: v2,
        },
      },
      next_gate: next,
      judges: { judgments: judgments.length, labels: labels.length },
      events: { trials, traces: kept.length },
      wall_ms: Date.now() - started,
    };
  } finally {
    await recorder.close();
  }
};
