import type { TraceSampled } from '../../schemas/events/index.ts';
import { InputError } from '../../schemas/errors.ts';
import { rowList } from '../format/numbers.ts';

/**
 * How a reviewer overrides the agent check where they confirm: `refuse` ends the refusal ("… or <refuse> if it is a
 * version of the same agent"), `done` says how it was confirmed all the same.
 */
export type AgentOverride = { readonly refuse: string; readonly done: string };
export const CLI_OVERRIDE: AgentOverride = { refuse: 'add --any-agent', done: '--any-agent' };
/** The Production view's checkbox, the dashboard's --any-agent. */
export const DASHBOARD_OVERRIDE: AgentOverride = {
  refuse: 'tick "confirm although it was recorded by another agent"',
  done: '"confirm although it was recorded by another agent"',
};

/**
 * The agent check of a confirmation, shared by `passk review --confirm` and the dashboard's confirm action: `vet`
 * (confirmFailure's) reads the agent versions with trials on the dataset's suite and refuses a trace of a version
 * that has none while others have some, unless `anyAgent`; `checked` then says what the check could not vouch for
 * (undefined: the trace's version has trials on the suite).
 */
export const agentCheck = (opts: {
  dataset: string;
  anyAgent: boolean;
  /** The agent versions with trials on the suite (suiteAgentVersions); a rejection: confirmed unchecked, said so. */
  versionsOf: (suite: string) => Promise<string[]>;
  override: AgentOverride;
}): { vet: (trace: TraceSampled) => Promise<void>; checked: (trace: TraceSampled) => string | undefined } => {
  let versions: string[] | undefined;
  const { dataset, override } = opts;
  return {
    vet: async (trace) => {
      versions = await opts.versionsOf(dataset).catch(() => undefined); // the store busy or unreachable
      if (versions?.length && !versions.includes(trace.agent_version) && !opts.anyAgent)
        throw new InputError(
          `trace ${trace.trace_id} was recorded by agent version ${trace.agent_version}, which has no trials on ` +
            `suite ${dataset} (its versions: ${rowList(versions, 6)}): as a must-not-break row of ` +
            `${dataset} it would gate those versions on another agent's request. Confirm it for the ` +
            `dataset ${trace.agent_version} is evaluated on, or ${override.refuse} if it is a version of the same agent.`,
          { field: 'dataset' },
        );
    },
    checked: (trace) =>
      versions === undefined
        ? `the store did not answer: check that ${trace.agent_version} is an agent evaluated on ${dataset}`
        : versions.length === 0
          ? `no agent version has trials on suite ${dataset} yet to check it against`
          : versions.includes(trace.agent_version)
            ? undefined
            : `${trace.agent_version} has no trials on suite ${dataset} (${rowList(versions, 6)}): confirmed all the same (${override.done})`,
  };
};
