import kafkajs from 'kafkajs';
import { BackendUnavailable, PipelineError } from '../../schemas/errors.ts';
import { LogRejected } from '../errors.ts';

// kafkajs spreads its error classes into module.exports, which Node's ESM named-export detection
// cannot see: take them from the default export.
const { KafkaJSConnectionError, KafkaJSError, KafkaJSNumberOfRetriesExceeded, KafkaJSRequestTimeoutError } = kafkajs;

/**
 * Protocol error types of a commit from a member whose generation is over, or sent to a broker that is no longer
 * the group's coordinator. kafkajs 2.2.4 keeps the coordinator it found while its connection lasts, so after the
 * coordinator moved (a broker killed, or back and leading again) every retry of the commit asks the old one; it counts
 * NOT_COORDINATOR_FOR_GROUP as a rebalance (`isRebalancing`) and joins again through the new coordinator, after
 * which the partitions are read again from their last commit (the fault campaign's seed 17031728: a store rebuild's
 * commit, refused five times, ended `passk process` with exit 3).
 */
export const FENCED_COMMIT_TYPES = new Set([
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'REBALANCE_IN_PROGRESS',
  'FENCED_INSTANCE_ID',
  'NOT_COORDINATOR_FOR_GROUP',
]);

/** `type` fields of a kafkajs error and of the errors it wraps. */
export const protocolTypes = (e: unknown): string[] => {
  const out: string[] = [];
  for (
    let cur = e, depth = 0;
    cur && typeof cur === 'object' && depth < 5;
    cur = (cur as { cause?: unknown }).cause, depth++
  )
    if ('type' in cur && typeof cur.type === 'string') out.push(cur.type);
  return out;
};

/**
 * From kafkajs's typed fields: `retriable`, or a retry budget that ran out on a connection or
 * timeout, means the cluster may come back (BackendUnavailable); anything else is a refusal.
 */
export const classifyKafkaError = (e: unknown, what: string): unknown => {
  // kafkajs 2.2.4 throws a plain Error when a request finds its broker's connection gone (src/broker/index.js),
  // e.g. after a connect whose requests timed out: the broker may come back
  if (e instanceof Error && !(e instanceof KafkaJSError) && e.message === 'Broker not connected')
    return new BackendUnavailable(`${what}: ${e.message}`, e);
  if (e instanceof PipelineError || !(e instanceof KafkaJSError)) return e;
  const transient =
    e.retriable ||
    e instanceof KafkaJSConnectionError ||
    e instanceof KafkaJSRequestTimeoutError ||
    (e instanceof KafkaJSNumberOfRetriesExceeded &&
      (e.cause === undefined || (e.cause instanceof KafkaJSError && e.cause.retriable)));
  return transient ? new BackendUnavailable(`${what}: ${e.message}`, e) : new LogRejected(`${what}: ${e.message}`, e);
};
