import type { EventLog, LogEvent } from '../../processors/ports.ts';
import type { RunFiles } from '../../schemas/commandLine.ts';
import { KEY_SEP, TOPICS } from '../../schemas/topics.ts';
import { readLog } from '../logReader.ts';

/**
 * The dataset file and agent each version's latest `passk run` recorded (RunFinished), unless that run was
 * retracted: what a confirmation command is printed with, by `passk gate --status` and `gate --declare --wait`.
 */
export interface RunSources {
  add(e: LogEvent['event']): void;
  source(suite: string, datasetVersion: string, agentVersion: string): RunFiles | undefined;
}

const keyOf = (...parts: string[]) => parts.join(KEY_SEP);

export const createRunSources = (): RunSources => {
  const finished = new Map<string, RunFiles & { run_id: string; at: number }>();
  const retracted = new Set<string>();
  return {
    add: (e) => {
      if (e.type === 'RunRetracted') retracted.add(`${e.suite}${KEY_SEP}${e.agent_version}${KEY_SEP}${e.run_id}`);
      if (e.type !== 'RunFinished' || !e.dataset_path || !e.agent_spec) return;
      const key = keyOf(e.suite, e.dataset_version, e.agent.version);
      const was = finished.get(key);
      if (!was || was.at <= e.occurred_at)
        finished.set(key, {
          dataset_path: e.dataset_path,
          agent_spec: e.agent_spec,
          run_id: e.run_id,
          at: e.occurred_at,
        });
    },
    source: (suite, dataset_version, agent_version) => {
      const f = finished.get(keyOf(suite, dataset_version, agent_version));
      return f && !retracted.has(`${suite}${KEY_SEP}${agent_version}${KEY_SEP}${f.run_id}`)
        ? { dataset_path: f.dataset_path, agent_spec: f.agent_spec }
        : undefined;
    },
  };
};

/** The run sources on the log's trials topic as it stands. */
export const readRunSources = async (log: EventLog): Promise<RunSources> => {
  const sources = createRunSources();
  await readLog(log, { topics: [TOPICS.trials] }, ({ event }) => sources.add(event));
  return sources;
};
