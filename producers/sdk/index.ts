/** The SDK: record trials, judgments, labels, traces and run ends; batched, retried, validated. */
export { createRecorder, type Recorder, type RecorderOptions } from './recorder.ts';
export { createBatcher, type Batcher, type BatcherOptions, type BatcherStats } from './batcher.ts';
export { Backpressure, RecorderClosed, UnsentEvents } from './errors.ts';
export { newRunId, runFinishedEventId, runTime, trialEventId, type TrialIdentity } from './ids.ts';
export {
  InvalidRecord,
  type FieldIssue,
  type JudgmentInput,
  type LabelInput,
  type RunFinishedInput,
  type TraceInput,
  type TrialInput,
} from './inputs.ts';
export { createMemoryPublisher, type MemoryPublisher } from './memoryPublisher.ts';
export {
  backoffMs,
  DEFAULT_RETRY,
  isRetriable,
  RetryPolicy,
  withRetry,
  type RetryOptions,
} from '../../schemas/retry.ts';
