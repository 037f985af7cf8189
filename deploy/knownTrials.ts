import { randomBytes } from 'node:crypto';
import { readToEnd } from '../processors/operators/readToEnd.ts';
import type { EventSource } from '../processors/ports.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { TOPICS } from '../schemas/topics.ts';

/**
 * The trials already in the log, in log order, for the ingest API's memory of answered attempts
 * (`IngestOptions.knownTrials`): read once from the start of passk.trials to its end, by a one-use group.
 * `stop` resolves to give up early (shutdown).
 */
export const logTrials =
  (log: EventSource, stop?: Promise<unknown>) =>
  (onTrial: (t: TrialRecorded) => void): Promise<number> =>
    readToEnd(log, {
      topic: TOPICS.trials,
      groupId: `passk-ingest.known.${randomBytes(4).toString('hex')}`,
      onEvent: (e) => void (e.type === 'TrialRecorded' && onTrial(e)),
      ...(stop ? { stop } : {}),
    });
