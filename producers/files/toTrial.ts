import { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { FlatTrial } from '../../schemas/trialFile.ts';
import { runTime, trialEventId } from '../sdk/ids.ts';
import { PRODUCER_VERSION } from '../version.ts';
import { parseAt, type Origin } from './fieldError.ts';

export const FILES_PRODUCER = `passk-files/${PRODUCER_VERSION}`;

/**
 * A flat trial as a TrialRecorded event. Without an `event_id` in the file, the id is derived from
 * (suite, dataset_version, agent_version, run_id, row_id, attempt) exactly as the SDK derives it, so
 * re-reading a file (or recording the same attempt through the SDK) yields the same event.
 * Without `occurred_at`, the event time is `receivedAt` when the trial is received live (the ingest API), else
 * (a file) the run id's ULID time when it has one, else 0. The id never depends on it.
 */
export const flatToTrial = (flat: FlatTrial, origin: Origin, receivedAt?: number): TrialRecorded => {
  const { agent_version, model, event_id, occurred_at, ...rest } = flat;
  const agent = { version: agent_version, ...(model === undefined ? {} : { model }) };
  const event = {
    ...rest,
    type: 'TrialRecorded' as const,
    schema_version: 1,
    producer: FILES_PRODUCER,
    agent,
    event_id: event_id ?? trialEventId({ ...flat, agent }),
    occurred_at: occurred_at ?? receivedAt ?? runTime(flat.run_id),
  };
  return parseAt(TrialRecorded, event, origin, 'trial');
};
