import { z } from 'zod';
import { select, type Querier } from './select.ts';

/** The dataset file and agent a version's latest `passk run` used (RunFinished, migration 15). */
export type RunSource = { dataset_path: string; agent_spec: string };

const Row = z.object({ agent_version: z.string(), path: z.string(), spec: z.string() });

/**
 * Per agent version, the dataset file and agent of its latest run on the suite and dataset version that recorded
 * them (`passk run` does; imports and the SDK do not, nor runs before migration 15), leaving out retracted runs:
 * what a suggested command needs to be run as printed. A version without one is absent.
 */
export const runSources = async (
  client: Querier,
  scope: { suite: string; dataset_version: string; versions: readonly string[] },
): Promise<Record<string, RunSource>> => {
  const rows = await select(
    client,
    Row,
    `SELECT agent_version,
            argMax(runs.dataset_path, occurred_at) AS path,
            argMax(runs.agent_spec, occurred_at) AS spec
     FROM runs FINAL
     WHERE suite = {suite:String} AND dataset_version = {dataset_version:String}
       AND has({versions:Array(String)}, agent_version)
       AND runs.dataset_path IS NOT NULL AND runs.agent_spec IS NOT NULL
       AND (suite, agent_version, run_id) NOT IN (SELECT suite, agent_version, run_id FROM retractions FINAL)
     GROUP BY agent_version`,
    { suite: scope.suite, dataset_version: scope.dataset_version, versions: [...scope.versions] },
  );
  return Object.fromEntries(rows.map((r) => [r.agent_version, { dataset_path: r.path, agent_spec: r.spec }]));
};
