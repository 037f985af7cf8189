import type { Command } from 'commander';
import { loadConfig, type PasskConfig } from '../deploy/config.ts';
import type { OpenStoreOptions, Store } from '../deploy/store.ts';
import type { EventLog } from '../processors/ports.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { PipelineError } from '../schemas/errors.ts';
import type { Querier, TrialFilter } from '../sinks/clickhouse/index.ts';
import { EXIT } from './exitCodes.ts';
import { writeStderr } from './format/render.ts';

/**
 * The plumbing every command shares: its configuration, the event log and the store it opens, and the exit code of a
 * backend that is down. Commands import it; it imports no command. The event log, the store and their clients
 * (SQLite, kafkajs, the ClickHouse client) load when a command opens them, not when it is defined, so a command's
 * `--help` and a command that reads only files do not pay for them (docs/performance.md, "CLI start-up").
 */

type Globals = { config?: string; backend?: string; dataDir?: string };

/**
 * The configuration of one command, the only place a command loads it: its global flags (`--config`, `--backend`,
 * `--data-dir`) over the environment over the config file (deploy/config.ts), plus the command's own flags that are
 * configuration (`serve --token`, `run --judge-url`), passed as `extra`.
 */
export const configOf = (cmd: Command, extra: Parameters<typeof loadConfig>[0] = {}): PasskConfig => {
  const g = cmd.optsWithGlobals<Globals>();
  return loadConfig({ config: g.config, backend: g.backend, dataDir: g.dataDir, ...extra });
};

/**
 * Opens the configured event log for one command, and closes it after. Shared by run, import, sample and
 * review; a command that already loaded its configuration passes it.
 */
export const withEventLog = async <T>(
  cmd: Command,
  use: (log: EventLog) => Promise<T>,
  config: PasskConfig = configOf(cmd),
): Promise<T> => {
  let log: EventLog;
  try {
    const { openEventLog } = await import('../deploy/eventLog.ts');
    log = await openEventLog(config);
  } catch (e) {
    throw new PipelineError(`cannot open the ${config.backend} event log: ${(e as Error).message}`, {
      retriable: true,
      cause: e,
    });
  }
  try {
    return await use(log);
  } finally {
    await log.close();
  }
};

/** A backend that is down gets its own exit code; everything else goes to main's handler. */
export const exitOnUnavailable = (e: unknown): never => {
  if (e instanceof PipelineError && e.retriable) {
    writeStderr(`passk: ${e.message}\n`);
    process.exit(EXIT.unavailable);
  }
  throw e;
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
  const config = configOf(cmd);
  const { openStore } = await import('../deploy/store.ts');
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
  const config = configOf(cmd);
  const [{ openStore, storeTarget }, { describeOwner, readStoreOwner }] = await Promise.all([
    import('../deploy/store.ts'),
    import('../deploy/storeOwner.ts'),
  ]);
  const owner = storeTarget(config).kind === 'embedded' ? readStoreOwner(config.dataDir) : undefined;
  if (owner) {
    const { localApiQuerier } = await import('../sinks/clickhouse/localApi.ts');
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
export const storeTrials = async (cmd: Command, filter: TrialFilter): Promise<TrialRecorded[]> => {
  const { loadTrialsForReport } = await import('../sinks/clickhouse/index.ts');
  return withReader(cmd, (q) => loadTrialsForReport(q, filter));
};
