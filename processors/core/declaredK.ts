import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { GroupKey } from './rowState.ts';
import { isConfirmationRun } from './screening.ts';

/**
 * A run that declared the attempts it gave each row: `k` of a completed run's RunFinished (`passk run --k`; an import
 * of another tool's file carries the tool's own setting: Inspect's `epochs`, τ²-bench's `num_trials`, τ-bench's
 * trials, promptfoo's `evaluateOptions.repeat`), or the same read from the file by `passk report`.
 */
export type DeclaredRun = Readonly<GroupKey & { run_id: string; k: number }>;

/** The declarations of RunFinished events: completed runs with a `k` (a partial or aborted run did not give it). */
export const declaredRunsOf = (events: Iterable<RunFinished>): DeclaredRun[] => {
  const runs: DeclaredRun[] = [];
  for (const e of events)
    if (e.status === 'completed' && e.k !== undefined)
      runs.push({
        suite: e.suite,
        dataset_version: e.dataset_version,
        agent_version: e.agent.version,
        run_id: e.run_id,
        k: e.k,
      });
  return runs;
};

const isConfirmation = isConfirmationRun({});

/**
 * The attempts per row a group's runs declared: the fewest any of them declared, so that it holds for every row
 * whichever run gave it its attempts (two runs of k = 3 over the same rows declare 3; their rows' 6 recorded
 * attempts still count, `defaultK` takes the larger). A confirmation run (run id `confirm…`) targets some rows only
 * and declares nothing for the others, so it is left out. Undefined when no run of the group declared.
 */
export const declaredKOf = (key: GroupKey, runs: readonly DeclaredRun[] = []): number | undefined => {
  let k: number | undefined;
  for (const r of runs)
    if (
      r.suite === key.suite &&
      r.dataset_version === key.dataset_version &&
      r.agent_version === key.agent_version &&
      !isConfirmation(r.run_id)
    )
      k = k === undefined ? r.k : Math.min(k, r.k);
  return k;
};
