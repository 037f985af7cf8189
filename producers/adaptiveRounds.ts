import type { EventLog } from '../processors/ports.ts';
import { TOPICS } from '../schemas/topics.ts';
import { readLog } from './logReader.ts';

/**
 * The adaptive runs on the log (their `AdaptiveRoundDecided` rounds on passk.decisions): run id → the run's
 * `--first-k`. The one source of an adaptive run's first stage for `passk report --from-store`, `passk compare
 * --from-store`, `passk process` and the dashboard (`firstStageOfRuns`).
 */
export const readAdaptiveRounds = async (log: EventLog): Promise<Map<string, number>> => {
  const runs = new Map<string, number>();
  await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (e.type === 'AdaptiveRoundDecided') runs.set(e.run_id, e.first_k);
  });
  return runs;
};
