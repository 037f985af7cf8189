/**
 * passk — the package's main export: the SDK.
 *
 *   import { createRecorder } from 'passk';
 *   const recorder = await createRecorder();                         // the configured backend (embedded by default)
 *   await recorder.recordTrial({ suite: 'refunds', dataset_version: 'v1', row_id: 'r17', run_id,
 *                                attempt: 0, agent: { version: 'prompt-v2' }, passed: true });
 *   await recorder.close();                                          // flushes; loses nothing
 */
import type { z } from 'zod';
import { loadConfig, PasskConfig } from './deploy/config.ts';
import { openEventLog } from './deploy/eventLog.ts';
import type { EventLog, EventPublisher } from './processors/ports.ts';
import { createRecorder as createRecorderFor, type Recorder, type RecorderOptions } from './producers/sdk/recorder.ts';

export type RecorderSetup = Omit<RecorderOptions, 'publisher'> &
  (
    | {
        /** Publish through this publisher (tests: `createMemoryPublisher()`); the caller closes it. */ readonly publisher: EventPublisher;
        readonly backend?: never;
      }
    | {
        readonly publisher?: never;
        /**
         * The backend, as in passk.config.json (`{ backend: 'embedded', dataDir }` or `{ backend: 'kafka', kafka: { brokers,
         * schemaRegistryUrl } }`). Absent: read from PASSK_* env and passk.config.json, like the CLI. The recorder owns
         * the connection and closes it in `close()`.
         */
        readonly backend?: z.input<typeof PasskConfig>;
      }
  );

/** A recorder over a publisher, or over the configured backend (see `RecorderSetup`). */
export const createRecorder = async (setup: RecorderSetup = {}): Promise<Recorder> => {
  if (setup.publisher) return createRecorderFor({ ...setup, publisher: setup.publisher });
  const { backend, ...opts } = setup;
  const config = backend ? PasskConfig.parse(backend) : loadConfig();
  const log = await openEventLog(config);
  const recorder = createRecorderFor({ ...opts, publisher: log.publisher });
  return {
    ...recorder,
    get pending() {
      return recorder.pending;
    },
    get stats() {
      return recorder.stats;
    },
    async close() {
      try {
        await recorder.close();
      } finally {
        await log.close();
      }
    },
  };
};

/**
 * The configured event log (the backend as `createRecorder` resolves it), for the live gate: declare a comparison with
 * `declareComparison`, await the processors' verdict with `waitForVerdict` (what `passk gate --declare --wait` does).
 * The caller closes it.
 */
export const openLog = async (backend?: z.input<typeof PasskConfig>): Promise<EventLog> =>
  openEventLog(backend ? PasskConfig.parse(backend) : loadConfig());

export type { EventLog } from './processors/ports.ts';
export {
  comparisonId,
  declareComparison,
  waitForDecisionStep,
  waitForVerdict,
  type DeclareInput,
  type Declared,
} from './producers/gate/index.ts';
export type { Recorder, RecorderOptions } from './producers/sdk/recorder.ts';
export {
  Backpressure,
  createMemoryPublisher,
  DEFAULT_RETRY,
  InvalidRecord,
  newRunId,
  RecorderClosed,
  runTime,
  trialEventId,
  UnsentEvents,
  type JudgmentInput,
  type LabelInput,
  type MemoryPublisher,
  type RunFinishedInput,
  type TraceInput,
  type TrialInput,
} from './producers/sdk/index.ts';
export type { RetryPolicy } from './schemas/retry.ts';
export * from './producers/sampler/index.ts';
export {
  runDataset,
  runAdaptive,
  createAgent,
  type AdaptiveRunOptions,
  type AdaptiveSummary,
  type AgentResult,
  type TrialRequest,
  type RunOptions,
  type RunSummary,
} from './producers/runner/index.ts';
export { importFiles, type FileReport } from './producers/importers/importFiles.ts';
export type {
  PasskEvent,
  TrialRecorded,
  TraceSampled,
  JudgmentRecorded,
  LabelRecorded,
  RunFinished,
  AdaptiveRoundDecided,
} from './schemas/events/index.ts';
