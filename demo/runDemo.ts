import { fileURLToPath } from 'node:url';
import {
  DEFAULT_REPORT_OPTIONS,
  evaluateGate,
  MUST_NOT_BREAK_TAG,
  versionPairs,
  type Comparison,
  type GateVerdict,
} from '../processors/core/index.ts';
import { createModuleAgent } from '../producers/runner/agents/moduleAgent.ts';
import type { DatasetRow } from '../producers/runner/dataset.ts';
import { exactGrader } from '../producers/runner/graders/exact.ts';
import { runTrials } from '../producers/runner/runTrials.ts';
import type { Recorder } from '../producers/sdk/recorder.ts';
import { DEFAULT_RETRY } from '../schemas/retry.ts';
import { reportGroupsFromStore } from '../sinks/clickhouse/queries/report.ts';
import type { GateEvaluated } from '../schemas/events/decisions.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { AGENT_ID, BASELINE, CANDIDATE, FIXED, type AgentVersion } from './agents.ts';
import { DEMO_DATASET_ID, DEMO_SEED, loadDemoDataset, type DemoRow } from './dataset/demoRow.ts';
import type { DemoPipeline, DemoProgress, DemoStage } from './pipeline.ts';

export const DEMO_SUITE = 'refund-review';
export const PRODUCER = 'passk-demo/0.1.0';

export interface DemoOptions {
  readonly seed?: number;
  /** Attempts per row per version. @default 3 */
  readonly k?: number;
  /** Confirmation attempts per suspected regression and version. @default 6 */
  readonly confirmAttempts?: number;
  /** Extra confirmation attempts on must-not-break rows (the seed: spend more attempts on the rows you tagged). @default 3 */
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

/** The gate, computed by the core from the verdicts recorded in the store (no gate shopping: nothing is re-run). */
export const gateFromStore = async (
  pipeline: DemoPipeline,
  scope: { datasetVersion: string; baseline: string; candidate: string },
): Promise<{ verdict: GateVerdict; comparison: Comparison }> => {
  const groups = await reportGroupsFromStore(pipeline.store, {
    suites: [DEMO_SUITE],
    datasetVersions: [scope.datasetVersion],
    agentVersions: [scope.baseline, scope.candidate],
  });
  const pairs = versionPairs(groups, scope.baseline, scope.candidate).both;
  const verdict = evaluateGate(
    {
      baseline: scope.baseline,
      candidate: scope.candidate,
      pairs,
      mustNotBreak: { tag: MUST_NOT_BREAK_TAG, ids: [] },
      rules: {},
    },
    DEFAULT_REPORT_OPTIONS,
  );
  const comparison = verdict.comparisons[0];
  if (!comparison)
    throw new Error(`no trials of both ${scope.baseline} and ${scope.candidate} on dataset ${scope.datasetVersion}`);
  return { verdict, comparison };
};

export const gateEvent = (v: GateVerdict, scope: { datasetVersion: string }, at: number): GateEvaluated => {
  const gate_id = `gate-${DEMO_SUITE}-${scope.datasetVersion}-${v.candidate}`;
  return {
    event_id: deterministicEventId(at, gate_id),
    type: 'GateEvaluated',
    schema_version: 1,
    occurred_at: at,
    producer: PRODUCER,
    gate_id,
    suite: DEMO_SUITE,
    dataset_id: DEMO_DATASET_ID,
    dataset_version: scope.datasetVersion,
    baseline: v.baseline,
    candidate: v.candidate,
    verdict: v.verdict,
    reasons: v.rules.map((r) => ({ rule: r.rule, passed: r.passed, detail: r.detail, rows: r.rows })),
    evidence: v.evidence.map((e) => ({
      row_id: e.row_id,
      baseline_attempts: e.baseline_attempts,
      candidate_attempts: e.candidate_attempts,
    })),
  };
};

export { BASELINE, CANDIDATE, FIXED, DEMO_SEED, loadDemoDataset };
