import type { Command } from 'commander';
import { loadConfig, type PasskConfig } from '../deploy/config.ts';
import { openStore, storeTarget, type OpenStoreOptions, type Store } from '../deploy/store.ts';
import { describeOwner, readStoreOwner } from '../deploy/storeOwner.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { PipelineError } from '../schemas/errors.ts';
import { loadTrialsForReport, type Querier, type TrialFilter } from '../sinks/clickhouse/index.ts';
import { localApiQuerier } from '../sinks/dashboard/localApi.ts';

type Globals = { config?: string; backend?: string; dataDir?: string };

export const configFor = (cmd: Command): PasskConfig => {
  const g = cmd.optsWithGlobals<Globals>();
  return loadConfig({ config: g.config, backend: g.backend, dataDir: g.dataDir });
};

/**
 * Opens the configured store for one command and closes it afterwards. A store that is held by
 * another process or cannot be reached throws; cli/main.ts turns that into exit code 3.
 */
export const withStore = async <T>(
  cmd: Command,
  use: (store: Store, config: PasskConfig) => Promise<T>,
  opts: OpenStoreOptions = {},
): Promise<T> => {
  const config = configFor(cmd);
  const store = await openStore(config, opts);
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
};

/**
 * For commands that only read: opens the store, or, when another passk process holds the embedded
 * store (serve, process), sends the queries to that process's local HTTP API. When it holds the store
 * without an API that answers, the error names the process and its URL.
 */
export const withReader = async <T>(
  cmd: Command,
  use: (reader: Querier, config: PasskConfig) => Promise<T>,
): Promise<T> => {
  const config = configFor(cmd);
  const owner = storeTarget(config).kind === 'embedded' ? readStoreOwner(config.dataDir) : undefined;
  if (owner) {
    try {
      return await use(localApiQuerier(owner.url, owner.token), config);
    } catch (e) {
      if (e instanceof TypeError)
        // fetch failed: the owner is alive but its API does not answer
        throw new PipelineError(
          `the embedded store in ${config.dataDir} is held by ${describeOwner(owner)}, and its local API does not answer (${(e.cause as Error | undefined)?.message ?? e.message}); wait for it or stop it`,
          { retriable: true, cause: e },
        );
      throw e;
    }
  }
  const store = await openStore(config);
  try {
    return await use(store.client, config);
  } finally {
    await store.close();
  }
};

/** The stored trials (each event id once), from the store or through its owner. */
export const storeTrials = (cmd: Command, filter: TrialFilter): Promise<TrialRecorded[]> =>
  withReader(cmd, (q) => loadTrialsForReport(q, filter));
