import { z } from 'zod';
import { declaredKOf, type DeclaredRun } from '../../../processors/core/declaredK.ts';
import { select, type Querier } from './select.ts';

const Run = z
  .object({
    suite: z.string(),
    dataset_version: z.string(),
    agent_version: z.string(),
    run_id: z.string(),
    declared: z.number(),
  })
  .transform(({ declared, ...run }): DeclaredRun => ({ ...run, k: declared }));

/**
 * The runs that declared the attempts they gave each row (`declaredRunsOf`'s rule on the `runs` table): completed,
 * with a `k` (`passk run --k`; an import of another tool's file writes the tool's own setting), and not retracted.
 * One entry per run: its smallest `k` if it finished more than once (a resumed run). An empty filter is every one.
 */
export const declaredRuns = (
  client: Querier,
  filter: {
    suites?: readonly string[];
    datasetVersions?: readonly string[];
    agentVersions?: readonly string[];
  } = {},
): Promise<DeclaredRun[]> =>
  select(
    client,
    Run,
    `SELECT suite, dataset_version, agent_version, run_id, toUInt32(min(runs.k)) AS declared
     FROM runs FINAL
     WHERE status = 'completed' AND runs.k IS NOT NULL
       AND (empty({suites:Array(String)}) OR has({suites:Array(String)}, suite))
       AND (empty({dataset_versions:Array(String)}) OR has({dataset_versions:Array(String)}, dataset_version))
       AND (empty({agent_versions:Array(String)}) OR has({agent_versions:Array(String)}, agent_version))
       AND (suite, agent_version, run_id) NOT IN (SELECT suite, agent_version, run_id FROM retractions FINAL)
     GROUP BY suite, dataset_version, agent_version, run_id
     ORDER BY suite, dataset_version, agent_version, run_id`,
    {
      suites: [...(filter.suites ?? [])],
      dataset_versions: [...(filter.datasetVersions ?? [])],
      agent_versions: [...(filter.agentVersions ?? [])],
    },
  );

/**
 * The attempts per row one version's runs declared (`declaredKOf`), on one dataset version or, without one, on every
 * dataset version of the suite (the fewest any of them declared); undefined when none did.
 */
export const declaredK = async (
  client: Querier,
  scope: { suite: string; agent_version: string; dataset_version?: string | undefined },
): Promise<number | undefined> => {
  const runs = await declaredRuns(client, {
    suites: [scope.suite],
    agentVersions: [scope.agent_version],
    ...(scope.dataset_version ? { datasetVersions: [scope.dataset_version] } : {}),
  });
  let k: number | undefined;
  for (const dv of new Set(runs.map((r) => r.dataset_version))) {
    const of = declaredKOf({ suite: scope.suite, dataset_version: dv, agent_version: scope.agent_version }, runs);
    if (of !== undefined) k = k === undefined ? of : Math.min(k, of);
  }
  return k;
};
