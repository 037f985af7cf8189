import { groupTrials, type Group } from '../../../processors/core/groups.ts';
import type { TrialRecorded } from '../../../schemas/events/trialRecorded.ts';
import { rowToTrial, TRIAL_COLUMNS, TrialRow } from '../rows/trialRow.ts';
import { select, type Querier } from './select.ts';
import { NOT_RETRACTED } from './retracted.ts';

export interface TrialFilter {
  /** Only these suites (empty or absent: all). */
  readonly suites?: readonly string[];
  /** Only these agent versions (empty or absent: all). */
  readonly agentVersions?: readonly string[];
  readonly datasetVersions?: readonly string[];
  readonly rowIds?: readonly string[];
}

const TRIALS_SQL = `
SELECT ${TRIAL_COLUMNS}
FROM trials FINAL
WHERE (empty({suites:Array(String)}) OR has({suites:Array(String)}, suite))
  AND (empty({agent_versions:Array(String)}) OR has({agent_versions:Array(String)}, agent_version))
  AND (empty({dataset_versions:Array(String)}) OR has({dataset_versions:Array(String)}, dataset_version))
  AND (empty({row_ids:Array(String)}) OR has({row_ids:Array(String)}, row_id))
  AND ${NOT_RETRACTED}
ORDER BY suite, dataset_version, agent_version, row_id, occurred_at, event_id`;

/**
 * The stored trials as TrialRecorded events, each event id once: exactly what the file readers
 * hand the report builder, so `groupTrials` → `buildReport` gives the same document as
 * `passk report FILE` for the same trials.
 */
export const loadTrialsForReport = async (client: Querier, filter: TrialFilter = {}): Promise<TrialRecorded[]> => {
  const rows = await select(client, TrialRow, TRIALS_SQL, {
    suites: filter.suites ?? [],
    agent_versions: filter.agentVersions ?? [],
    dataset_versions: filter.datasetVersions ?? [],
    row_ids: filter.rowIds ?? [],
  });
  return rows.map(rowToTrial);
};

/** `loadTrialsForReport` folded into the groups `buildReport` takes. */
export const reportGroupsFromStore = async (client: Querier, filter: TrialFilter = {}): Promise<Group[]> =>
  groupTrials(await loadTrialsForReport(client, filter));
