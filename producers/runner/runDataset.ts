import type { EventPublisher, EventSource } from '../../processors/ports.ts';
import { InputError } from '../../schemas/errors.ts';
import { contentHash, sha256 } from '../importers/common.ts';
import { createRecorder } from '../sdk/recorder.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../../schemas/retry.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { createAgent } from './agents/index.ts';
import type { Agent, AgentMeta } from './agents/types.ts';
import { type DatasetRow, readDataset } from './dataset.ts';
import { createGrader, type Grader, type GraderChoice } from './graders/index.ts';
import { recordedAttempts } from './resume.ts';
import { type RunProgress, type RunSummary, runTrials } from './runTrials.ts';

export interface RunOptions extends GraderChoice {
  readonly dataset: string;
  /** A module path, `http(s)://…`, or `cmd:<command>`. */
  readonly agent: string;
  /** @default 3 */
  readonly k?: number;
  /** @default 8 */
  readonly concurrency?: number;
  /** @default 60000 */
  readonly timeoutMs?: number;
  /** Infrastructure retries per trial. @default DEFAULT_RUN_RETRY */
  readonly retry?: RetryPolicy;
  readonly isolation?: 'worker' | 'none';
  /** @default the dataset file name */
  readonly suite?: string;
  readonly datasetId?: string;
  /** @default `sha-<hash of the dataset file>` */
  readonly datasetVersion?: string;
  /**
   * @default the module's `meta.version`, else `sha-<hash of the agent's fingerprint>`: a module's source, a command's
   * text and the files it names (`commandFingerprint`), an HTTP agent's URL
   */
  readonly agentVersion?: string;
  /** @default deterministic from (suite, dataset version, agent version): re-running the same command resumes */
  readonly runId?: string;
  /** Confirmation: run only these rows, `extra` attempts each, in a run whose id starts with "confirm". */
  readonly confirm?: { readonly rows: readonly { suite?: string; row_id: string }[]; readonly extra: number };
  /** Read the log to skip attempts already recorded. @default true */
  readonly resume?: boolean;
  /** Stop when the first this many trials all fail the same way (ungraded); 0 = never. @default 5 */
  readonly stopAfter?: number;
}

export interface RunDatasetDeps {
  readonly publisher: EventPublisher;
  readonly source?: EventSource;
  readonly onStart?: (info: {
    runId: string;
    suite: string;
    datasetVersion: string;
    agentVersion: string;
    /** What the default agent version does not hash (`Agent.fingerprintNote`); absent for a version given or declared. */
    agentVersionNote?: string;
    planned: number;
    recorded: number;
  }) => void;
  readonly onProgress?: (p: RunProgress) => void;
  readonly signal?: AbortSignal;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** @default 2 retries after 500 ms, then 1 s: for timeouts, crashes, 5xx, a judge that is down. */
export const DEFAULT_RUN_RETRY: RetryPolicy = { ...DEFAULT_RETRY, retries: 2, initialMs: 500, maxMs: 10_000 };

/** An agent spec fit to record and print: a URL's user and password left out (`https://user:key@host` → `https://host`). */
export const agentSpecOf = (spec: string): string => spec.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');

export const agentFields = (meta: AgentMeta | undefined) => ({
  ...(meta?.id ? { id: meta.id } : {}),
  ...(meta?.model ? { model: meta.model } : {}),
  ...(meta?.prompt ? { prompt_hash: `sha-${sha256(meta.prompt).slice(0, 12)}` } : {}),
  ...(meta?.tools !== undefined ? { tools_hash: `sha-${contentHash(meta.tools)}` } : {}),
  ...(meta?.config !== undefined ? { config_hash: `sha-${contentHash(meta.config)}` } : {}),
});

/** What every run of one dataset file with one agent shares: its rows, grader, agent and versions. */
export interface PreparedRun {
  readonly rows: readonly DatasetRow[];
  readonly datasetFile: string;
  /** `--agent` as given, credentials in a URL left out (`agentSpecOf`). */
  readonly agentSpec: string;
  readonly suite: string;
  readonly datasetId: string;
  readonly datasetVersion: string;
  readonly agentVersion: string;
  /** What the default agent version leaves out (`Agent.fingerprintNote`), when the version is the default. */
  readonly agentVersionNote: string | undefined;
  readonly agentMeta: AgentMeta | undefined;
  readonly grader: Grader;
  readonly agent: Agent;
}

/** Reads the dataset, builds the grader and starts the agent; `use` runs with them, then the agent is closed. */
export const withPreparedRun = async <T>(opts: RunOptions, use: (p: PreparedRun) => Promise<T>): Promise<T> => {
  const dataset = await readDataset(opts.dataset);
  const grader = await createGrader(opts);
  const agent = await createAgent(opts.agent, { ...(opts.isolation ? { isolation: opts.isolation } : {}) });
  const declared = opts.agentVersion ?? agent.meta?.version;
  try {
    return await use({
      rows: dataset.rows,
      datasetFile: opts.dataset,
      agentSpec: agentSpecOf(opts.agent),
      suite: opts.suite ?? dataset.name,
      datasetId: opts.datasetId ?? dataset.name,
      datasetVersion: opts.datasetVersion ?? dataset.version,
      agentVersion: declared ?? `sha-${sha256(agent.fingerprint).slice(0, 12)}`,
      agentVersionNote: declared === undefined ? agent.fingerprintNote : undefined,
      agentMeta: agent.meta,
      grader,
      agent,
    });
  } finally {
    await agent.close();
  }
};

/** The rows of a dataset with these ids, in dataset order; ids the dataset lacks are an input error. */
export const pickRows = (p: PreparedRun, ids: Iterable<string>): DatasetRow[] => {
  const wanted = new Set(ids);
  const missing = [...wanted].filter((id) => !p.rows.some((r) => r.id === id));
  if (missing.length)
    throw new InputError(`rows to confirm are not in the dataset: ${missing.slice(0, 5).join(', ')}`, {
      file: p.datasetFile,
    });
  return p.rows.filter((r) => wanted.has(r.id));
};

/** One run of a prepared dataset and agent: skips what the log already holds for the run id, records the rest. */
export const executeRun = async (
  p: PreparedRun,
  run: {
    readonly runId: string;
    readonly rows: readonly DatasetRow[];
    readonly k: number;
    readonly moreAttempts?: ReadonlyMap<string, number>;
    readonly recorded?: ReadonlyMap<string, boolean | null>;
  },
  opts: RunOptions,
  deps: RunDatasetDeps,
): Promise<RunSummary> => {
  const identity = {
    suite: p.suite,
    dataset_id: p.datasetId,
    dataset_version: p.datasetVersion,
    run_id: run.runId,
    agent: { version: p.agentVersion, ...agentFields(p.agentMeta) },
  };
  const recorded =
    run.recorded ??
    (opts.resume === false || !deps.source
      ? new Map<string, boolean | null>()
      : await recordedAttempts(deps.source, identity));
  const planned = run.rows.reduce((n, r) => n + run.k + (run.moreAttempts?.get(r.id) ?? 0), 0);
  deps.onStart?.({
    runId: run.runId,
    suite: p.suite,
    datasetVersion: p.datasetVersion,
    agentVersion: p.agentVersion,
    ...(p.agentVersionNote ? { agentVersionNote: p.agentVersionNote } : {}),
    planned,
    recorded: recorded.size,
  });
  const recorder = createRecorder({
    publisher: deps.publisher,
    producer: `passk-runner/${PRODUCER_VERSION}`,
    maxBatch: 50,
    maxWaitMs: 250,
  });
  try {
    return await runTrials(
      {
        rows: run.rows,
        identity,
        k: run.k,
        source: { dataset_path: p.datasetFile, agent_spec: p.agentSpec },
        ...(run.moreAttempts ? { moreAttempts: run.moreAttempts } : {}),
        concurrency: opts.concurrency ?? 8,
        timeoutMs: opts.timeoutMs ?? 60_000,
        retry: opts.retry ?? DEFAULT_RUN_RETRY,
        ...(opts.stopAfter !== undefined ? { stopAfter: opts.stopAfter } : {}),
      },
      {
        agent: p.agent,
        grader: p.grader,
        recorder,
        recorded,
        ...(deps.onProgress ? { onProgress: deps.onProgress } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
      },
    );
  } finally {
    await recorder.close();
  }
};

/** Runs an agent k times on every row of a dataset file and records every trial; see `runTrials`. */
export const runDataset = async (opts: RunOptions, deps: RunDatasetDeps): Promise<RunSummary> =>
  withPreparedRun(opts, async (p) => {
    const rows = opts.confirm
      ? pickRows(
          p,
          opts.confirm.rows.filter((r) => r.suite === undefined || r.suite === p.suite).map((r) => r.row_id),
        )
      : p.rows;
    const confirmKey = opts.confirm ? `confirm-${contentHash(rows.map((r) => r.id))}-` : '';
    const runId =
      opts.runId ??
      `${opts.confirm ? confirmKey : 'run-'}${sha256(JSON.stringify([p.suite, p.datasetVersion, p.agentVersion])).slice(0, 16)}`;
    return executeRun(p, { runId, rows, k: opts.confirm ? opts.confirm.extra : (opts.k ?? 3) }, opts, deps);
  });
