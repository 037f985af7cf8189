import { fileURLToPath } from 'node:url';
import { compareVersions, DEFAULT_REPORT_OPTIONS, versionPairs, type Comparison } from '../processors/core/index.ts';
import { declareComparison, waitForDecisionStep, waitForVerdict } from '../producers/gate/index.ts';
import { createModuleAgent } from '../producers/runner/agents/moduleAgent.ts';
import type { DatasetRow } from '../producers/runner/dataset.ts';
import { exactGrader } from '../producers/runner/graders/exact.ts';
import { runTrials } from '../producers/runner/runTrials.ts';
import type { Recorder } from '../producers/sdk/recorder.ts';
import { DEFAULT_RETRY } from '../schemas/retry.ts';
import { reportGroupsFromStore } from '../sinks/clickhouse/queries/report.ts';
import type { ConfirmationRequested } from '../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../schemas/events/decisions.ts';
import { AGENT_ID, BASELINE, CANDIDATE, FIXED, type AgentVersion } from './agents.ts';
import { DEMO_DATASET_ID, DEMO_SEED, loadDemoDataset, type DemoRow } from './dataset/demoRow.ts';
import type { DemoPipeline, DemoProgress, DemoStage } from './pipeline.ts';

export const DEMO_SUITE = 'refund-review';
export const PRODUCER = 'passk-demo/0.1.0';

export interface DemoOptions {
  readonly seed?: number;
  /** Attempts per row per version. @default 3 */
  readonly k?: number;
  /** Confirmation attempts the processors ask for per suspected regression and version (declared). @default 6 */
  readonly confirmAttempts?: number;
  /**
   * More confirmation attempts they ask for on must-not-break rows (declared; the seed: spend more attempts on the
   * rows you tagged). @default 3
   */
  readonly mustNotBreakExtra?: number;
  /** @default 16 */
  readonly concurrency?: number;
  readonly onProgress?: (p: DemoProgress) => void;
  readonly clock?: () => number;
}

/** The agent's module: its TypeScript source in the repository, its compiled JavaScript in the built package. */
const AGENT_EXT = import.meta.url.endsWith('.js') ? 'js' : 'ts';
const agentPath = (version: AgentVersion): string =>
  fileURLToPath(new URL(`./agents/${version}.${AGENT_EXT}`, import.meta.url));

export const toRunnerRow = (r: DemoRow): DatasetRow => ({
  id: r.row_id,
  input: r.input,
  expected: r.expected,
  tags: r.tags,
  expected_checks: r.expected_checks,
});

/** Runs one version over rows through the trial runner (module agent, exact grader), recording to the log. */
export const runVersion = async (ctx: {
  recorder: Recorder;
  version: AgentVersion;
  rows: readonly DatasetRow[];
  datasetVersion: string;
  runId: string;
  k: number;
  confirm?: { rows: readonly string[]; extra: number };
  concurrency: number;
  stage: DemoStage;
  onProgress?: (p: DemoProgress) => void;
  clock?: () => number;
}) => {
  const agent = await createModuleAgent({ path: agentPath(ctx.version), isolation: 'none' });
  try {
    return await runTrials(
      {
        rows: ctx.rows,
        identity: {
          suite: DEMO_SUITE,
          dataset_id: DEMO_DATASET_ID,
          dataset_version: ctx.datasetVersion,
          run_id: ctx.runId,
          agent: { id: AGENT_ID, version: ctx.version },
        },
        k: ctx.k,
        ...(ctx.confirm ? { confirm: ctx.confirm } : {}),
        concurrency: ctx.concurrency,
        timeoutMs: 10_000,
        retry: DEFAULT_RETRY,
      },
      {
        agent,
        grader: exactGrader(),
        recorder: ctx.recorder,
        ...(ctx.clock ? { clock: ctx.clock } : {}),
        onProgress: (p) =>
          ctx.onProgress?.({
            stage: ctx.stage,
            label: `${ctx.version} · ${ctx.runId}`,
            done: p.done + p.skipped,
            total: p.total,
          }),
      },
    );
  } finally {
    await agent.close();
  }
};

/**
 * The comparison the store's recorded verdicts give (the numbers, the two lists, what confirmation found and the
 * first divergent check), for the demo to print. It decides nothing: the gate is the processors' (`gateByProcessors`).
 */
export const comparisonFromStore = async (
  pipeline: DemoPipeline,
  scope: { datasetVersion: string; baseline: string; candidate: string },
): Promise<Comparison> => {
  const groups = await reportGroupsFromStore(pipeline.store, {
    suites: [DEMO_SUITE],
    datasetVersions: [scope.datasetVersion],
    agentVersions: [scope.baseline, scope.candidate],
  });
  const pair = versionPairs(groups, scope.baseline, scope.candidate).both[0];
  if (!pair)
    throw new Error(`no trials of both ${scope.baseline} and ${scope.candidate} on dataset ${scope.datasetVersion}`);
  return compareVersions(pair, DEFAULT_REPORT_OPTIONS);
};

/** How long the demo waits for each word of the processors (they run in the same process). */
const DECISION_WAIT_MS = 120_000;

/** The gate as the product ships it: the comparison declared, the processors' confirmation request, their verdict. */
export interface ProcessorsGate {
  readonly verdict: GateEvaluated;
  /** The processors' request for confirmation runs, which the demo ran; null when they asked for none. */
  readonly confirmation: ConfirmationRequested | null;
}

/**
 * Gates a candidate exactly as `passk gate --declare --wait` does, with the demo as the one who runs the confirmation
 * runs: declare the comparison (`declareComparison`), wait for the processors' next word (`waitForDecisionStep`);
 * when it is a confirmation request, run both versions on its rows, its attempts, under its run id, then await the
 * processors' `GateEvaluated` (`waitForVerdict`). The demo picks no rows and computes no verdict.
 */
export const gateByProcessors = async (
  pipeline: DemoPipeline,
  ctx: {
    datasetVersion: string;
    baseline: AgentVersion;
    candidate: AgentVersion;
    rows: readonly DatasetRow[];
    confirmationAttempts: number;
    mustNotBreakExtraAttempts: number;
    runConfirmation: (
      version: AgentVersion,
      request: ConfirmationRequested,
      rows: readonly DatasetRow[],
    ) => Promise<unknown>;
    clock: () => number;
  },
): Promise<ProcessorsGate> => {
  const { log } = pipeline;
  const { declared, verdict: known } = await declareComparison(
    log,
    {
      baseline: ctx.baseline,
      candidate: ctx.candidate,
      suite: DEMO_SUITE,
      datasetVersion: ctx.datasetVersion,
      mustNotBreak: [],
      rules: {},
      confirmationAttempts: ctx.confirmationAttempts,
      mustNotBreakExtraAttempts: ctx.mustNotBreakExtraAttempts,
    },
    { now: ctx.clock(), producer: PRODUCER },
  );
  const id = declared.comparison_id;
  const silent = (what: string) =>
    new Error(
      `the processors gave no ${what} on comparison ${id} within ${DECISION_WAIT_MS / 1000} s (passk gate --status --comparison ${id} shows what it waits for)`,
    );
  if (known) return { verdict: known, confirmation: null };
  const step = await waitForDecisionStep(log, id, DECISION_WAIT_MS);
  if (!step) throw silent('confirmation request or verdict');
  if (step.type === 'GateEvaluated') return { verdict: step, confirmation: null };
  const asked = new Set(step.rows);
  const rows = ctx.rows.filter((r) => asked.has(r.id));
  if (rows.length !== asked.size)
    throw new Error(
      `the processors asked to confirm rows the demo's dataset ${ctx.datasetVersion} lacks: ${step.rows.join(', ')}`,
    );
  for (const version of [ctx.baseline, ctx.candidate]) await ctx.runConfirmation(version, step, rows);
  await pipeline.settle();
  const verdict = await waitForVerdict(log, id, DECISION_WAIT_MS);
  if (!verdict) throw silent('verdict');
  return { verdict, confirmation: step };
};

export { BASELINE, CANDIDATE, FIXED, DEMO_SEED, loadDemoDataset };
