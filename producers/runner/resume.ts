import type { EventSource } from '../../processors/ports.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { readLog } from '../logReader.ts';
import type { TrialInput } from '../sdk/inputs.ts';
import { attemptKey } from './runTrials.ts';

/**
 * What a run already recorded: every TrialRecorded of this run (same suite, dataset version and agent
 * version) now in the log, by `attemptKey`, with its verdict. The runner skips these attempts.
 */
export const recordedAttempts = async (
  source: EventSource,
  identity: Pick<TrialInput, 'suite' | 'dataset_version' | 'run_id' | 'agent'>,
): Promise<Map<string, boolean | null>> => {
  const recorded = new Map<string, boolean | null>();
  await readLog(source, { topics: [TOPICS.trials] }, ({ event: e }) => {
    if (
      e.type === 'TrialRecorded' &&
      e.run_id === identity.run_id &&
      e.suite === identity.suite &&
      e.dataset_version === identity.dataset_version &&
      e.agent.version === identity.agent.version
    )
      recorded.set(attemptKey(e.row_id, e.attempt), e.passed);
  });
  return recorded;
};
