import {
  adaptiveClass,
  DEFAULT_ADAPTIVE,
  firstStage,
  planRound,
  type AdaptiveOptions,
  type AdaptiveRound,
  type AdaptiveRow,
  type FirstStage,
} from '../../processors/core/adaptive.ts';
import { DEFAULT_BOOTSTRAP } from '../../processors/core/bootstrap.ts';
import { emptyClassCounts, type ClassCounts } from '../../processors/core/classify.ts';
import { MUST_NOT_BREAK_TAG } from '../../processors/core/mustNotBreak.ts';
import type { AdaptiveRoundDecided } from '../../schemas/events/adaptive.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import { InputError } from '../../schemas/errors.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { KEY_SEP, TOPICS } from '../../schemas/topics.ts';
import { verdictOn } from '../gate/live.ts';
import { sha256 } from '../importers/common.ts';
import { readLog } from '../logReader.ts';
import { createRecorder, type Recorder } from '../sdk/recorder.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { recordedAttempts } from './resume.ts';
import { agentFields, DEFAULT_RUN_RETRY, withPreparedRun, type RunDatasetDeps, type RunOptions } from './runDataset.ts';
import { attemptKey, runTrials, type RunSummary } from './runTrials.ts';

/**
 * `passk run --adaptive` (docs/adaptive.md): the rounds of `planRound` run against a real agent. Round 0
 * gives every row its first stage; each later round gives one attempt to each row still uncertain, within
 * the budget. Every round's decisions are published (`AdaptiveRoundDecided`, passk.decisions) before its
 * attempts run; the run's one `RunFinished` comes at the end. Resumable like any run: the attempts and
 * rounds already in the log are read back, and the allocation goes on from the counts they hold.
 */
export interface AdaptiveRunOptions extends RunOptions {
  readonly adaptive: Partial<AdaptiveOptions>;
  /** Row ids that must not break, besides the rows tagged `must_not_break` in the dataset. */
  readonly mustNotBreak?: readonly string[];
}

export interface AdaptiveSummary extends RunSummary {
  readonly adaptive: AdaptiveOptions;
  readonly rounds: number;
  readonly rows: number;
  /** Attempts the run holds (ungraded included), and what fixed k = max-k would have used. */
  readonly attempts: number;
  readonly fixedAttempts: number;
  readonly stops: Record<string, number>;
  readonly classes: ClassCounts;
  /** The headline numbers, from each row's first `firstK` graded attempts only. */
  readonly firstStage: FirstStage;
  /**
   * The live gate decided a comparison of this candidate while the run went on (the processors' verdict on
   * passk.decisions): the run stopped early, its open rows with reason `gate_decided`.
   */
  readonly gate?: {
    readonly comparison_id: string;
    readonly baseline: string;
    readonly verdict: GateEvaluated['verdict'];
    /** Must-not-break rows the verdict found broken. */
    readonly broken: readonly string[];
  };
}

const checkOptions = (o: AdaptiveOptions, rows: number): void => {
  if (o.firstK > o.maxK)
    throw new InputError(`the first stage (${o.firstK}) cannot exceed --max-k (${o.maxK})`, { field: 'max-k' });
  if (o.budget !== null && o.budget < o.firstK * rows)
    throw new InputError(
      `--budget ${o.budget} cannot pay for the first stage: ${o.firstK} attempts × ${rows} rows = ${o.firstK * rows}`,
      { field: 'budget' },
    );
};

/** Rounds of this run already published, to number the next one after them. */
const roundsPublished = async (deps: RunDatasetDeps, runId: string, agentVersion: string): Promise<number> => {
  if (!deps.source) return 0;
  let rounds = 0;
  await readLog(deps.source, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (e.type === 'AdaptiveRoundDecided' && e.run_id === runId && e.agent_version === agentVersion)
      rounds = Math.max(rounds, e.round + 1);
  });
  return rounds;
};

export const runAdaptive = async (
  opts: AdaptiveRunOptions,
  deps: RunDatasetDeps & { readonly onRound?: (r: AdaptiveRound) => void; readonly clock?: () => number },
): Promise<AdaptiveSummary> =>
  withPreparedRun(opts, async (p) => {
    const o: AdaptiveOptions = { ...DEFAULT_ADAPTIVE, ...opts.adaptive };
    checkOptions(o, p.rows.length);
    const clock = deps.clock ?? Date.now;
    const started = clock();
    const runId =
      opts.runId ?? `adaptive-${sha256(JSON.stringify([p.suite, p.datasetVersion, p.agentVersion, o])).slice(0, 16)}`;
    const identity = {
      suite: p.suite,
      dataset_id: p.datasetId,
      dataset_version: p.datasetVersion,
      run_id: runId,
      agent: { version: p.agentVersion, ...agentFields(p.agentMeta) },
    };
    const resume = opts.resume !== false && deps.source !== undefined;
    const recorded = resume ? await recordedAttempts(deps.source!, identity) : new Map<string, boolean | null>();
    let round = resume ? await roundsPublished(deps, runId, p.agentVersion) : 0;
    const listed = new Set(opts.mustNotBreak ?? []);
    const mnb = (id: string, tags: readonly string[] | undefined) =>
      listed.has(id) || (tags ?? []).includes(MUST_NOT_BREAK_TAG);
    // each row's verdicts by attempt number
    const byRow = new Map(p.rows.map((r) => [r.id, new Map<number, boolean | null>()]));
    for (const [key, passed] of recorded) {
      const at = key.lastIndexOf(KEY_SEP);
      byRow.get(key.slice(0, at))?.set(Number(key.slice(at + 1)), passed);
    }
    const stateOf = (id: string, must: boolean): AdaptiveRow => {
      const v = [...byRow.get(id)!.values()];
      return {
        row_id: id,
        must_not_break: must,
        attempts: v.length,
        n: v.filter((x) => x !== null).length,
        c: v.filter((x) => x === true).length,
      };
    };
    const spent = () => [...byRow.values()].reduce((a, m) => a + m.size, 0);
    deps.onStart?.({
      runId,
      suite: p.suite,
      datasetVersion: p.datasetVersion,
      agentVersion: p.agentVersion,
      ...(p.agentVersionNote ? { agentVersionNote: p.agentVersionNote } : {}),
      planned: o.budget ?? p.rows.length * o.maxK,
      recorded: recorded.size,
    });
    const inner = createRecorder({
      publisher: deps.publisher,
      producer: `passk-runner/${PRODUCER_VERSION}`,
      maxBatch: 50,
      maxWaitMs: 250,
    });
    // the verdicts of this round's trials, as they are recorded
    const recorder: Recorder = {
      recordTrial: (t) => {
        byRow.get(t.row_id)?.set(t.attempt, t.passed ?? null);
        recorded.set(attemptKey(t.row_id, t.attempt), t.passed ?? null);
        return inner.recordTrial(t);
      },
      recordJudgment: (j) => inner.recordJudgment(j),
      recordLabel: (l) => inner.recordLabel(l),
      recordTrace: (t) => inner.recordTrace(t),
      markRunFinished: (r) => inner.markRunFinished(r),
      flush: () => inner.flush(),
      close: () => inner.close(),
      get pending() {
        return inner.pending;
      },
      get stats() {
        return inner.stats;
      },
    };
    const open = new Map(p.rows.map((r) => [r.id, r]));
    const stops: Record<string, number> = {};
    const totals = { total: 0, skipped: recorded.size, done: 0, passed: 0, failed: 0, ungraded: 0 };
    const errors: Record<string, number> = {};
    const messages: Record<string, string> = {};
    let stopped: RunSummary['stopped'];
    let retries = 0;
    let costUsd = 0;
    const tokens = { input: 0, output: 0 };
    let status: 'completed' | 'partial' = 'completed';
    let gate: GateEvaluated | undefined;
    try {
      for (;;) {
        const state = [...open.values()].map((r) => stateOf(r.id, mnb(r.id, r.tags)));
        // after the first stage, between rounds: has the live gate decided this candidate? (the processors
        // decide a declared comparison sequentially while the run is open, processors/folds/gates.ts)
        if (round > 0 && deps.source && state.length > 0)
          gate = await verdictOn(deps.source, {
            suite: p.suite,
            dataset_version: p.datasetVersion,
            candidate: p.agentVersion,
          });
        const plan = planRound(round, state, spent(), o, gate !== undefined);
        const event: AdaptiveRoundDecided = {
          event_id: deterministicEventId(clock(), 'AdaptiveRoundDecided', runId, p.agentVersion, round, plan.spent),
          type: 'AdaptiveRoundDecided',
          schema_version: 1,
          occurred_at: clock(),
          producer: `passk-runner/${PRODUCER_VERSION}`,
          run_id: runId,
          suite: p.suite,
          dataset_id: p.datasetId,
          dataset_version: p.datasetVersion,
          agent_version: p.agentVersion,
          round,
          spent: plan.spent,
          budget: o.budget,
          first_k: o.firstK,
          max_k: o.maxK,
          min_attempts: o.minAttempts,
          grants: plan.grants,
          decisions: plan.decisions,
          done: plan.done,
        };
        await deps.publisher.publish([event]);
        deps.onRound?.(plan);
        for (const d of plan.decisions)
          if (d.decision === 'stop') {
            open.delete(d.row_id);
            stops[d.reason] = (stops[d.reason] ?? 0) + 1;
          }
        round++;
        if (plan.done) break;
        const more = new Map(plan.grants.map((g) => [g.row_id, byRow.get(g.row_id)!.size + g.attempts]));
        const s = await runTrials(
          {
            rows: plan.grants.map((g) => open.get(g.row_id)!),
            identity,
            k: 0,
            moreAttempts: more,
            concurrency: opts.concurrency ?? 8,
            timeoutMs: opts.timeoutMs ?? 60_000,
            retry: opts.retry ?? DEFAULT_RUN_RETRY,
            finish: false,
            ...(opts.stopAfter !== undefined ? { stopAfter: opts.stopAfter } : {}),
          },
          {
            agent: p.agent,
            grader: p.grader,
            recorder,
            recorded: new Map(recorded),
            clock,
            ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
            ...(deps.signal ? { signal: deps.signal } : {}),
            ...(deps.sleep ? { sleep: deps.sleep } : {}),
          },
        );
        for (const k of ['done', 'passed', 'failed', 'ungraded'] as const) totals[k] += s[k];
        retries += s.retries;
        costUsd += s.costUsd;
        tokens.input += s.tokens.input;
        tokens.output += s.tokens.output;
        for (const [k, n] of Object.entries(s.errors)) errors[k] = (errors[k] ?? 0) + n;
        for (const [k, m] of Object.entries(s.messages)) messages[k] ??= m;
        if (s.stopped) stopped = s.stopped;
        if (s.status !== 'completed') {
          status = 'partial';
          break;
        }
      }
      const attempts = spent();
      await recorder.markRunFinished({
        run_id: runId,
        suite: p.suite,
        dataset_id: p.datasetId,
        dataset_version: p.datasetVersion,
        agent: identity.agent,
        status,
        trials: attempts,
        ungraded: [...recorded.values()].filter((x) => x === null).length,
        rows: p.rows.length,
        started_at: started,
        dataset_path: p.datasetFile,
        agent_spec: p.agentSpec,
      });
    } finally {
      await inner.close();
    }
    const classes = emptyClassCounts();
    const verdicts = p.rows.map((r) => {
      const m = byRow.get(r.id)!;
      const v = [...m.keys()].sort((a, b) => a - b).flatMap((a) => (m.get(a) === null ? [] : [m.get(a) === true]));
      classes[adaptiveClass(v.length, v.filter(Boolean).length, o.minAttempts)]++;
      return v;
    });
    const attempts = spent();
    return {
      runId,
      status,
      ...totals,
      total: attempts,
      retries,
      wallMs: clock() - started,
      costUsd,
      tokens,
      errors,
      messages,
      ...(stopped ? { stopped } : {}),
      adaptive: o,
      rounds: round,
      rows: p.rows.length,
      attempts,
      fixedAttempts: p.rows.length * o.maxK,
      stops,
      classes,
      firstStage: firstStage(verdicts, o.firstK, DEFAULT_BOOTSTRAP),
      ...(gate
        ? {
            gate: {
              comparison_id: gate.gate_id,
              baseline: gate.baseline,
              verdict: gate.verdict,
              broken: (gate.must_not_break ?? []).filter((m) => m.status === 'broken').map((m) => m.row_id),
            },
          }
        : {}),
    };
  });
