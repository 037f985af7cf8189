import type { Command } from 'commander';
import { loadConfig, type PasskConfig } from '../deploy/config.ts';
import { openStore, type OpenStoreOptions, type Store } from '../deploy/store.ts';

type Globals = { config?: string; backend?: string; dataDir?: string };

/**
 * Opens the configured store for one command and closes it afterwards. A store that is held by
 * another process or cannot be reached throws; cli/main.ts turns that into exit code 3.
 */
export const withStore = async <T>(
  cmd: Command,
  use: (store: Store, config: PasskConfig) => Promise<T>,
  opts: OpenStoreOptions = {},
): Promise<T> => {
  const g = cmd.optsWithGlobals<Globals>();
  const config = loadConfig({ config: g.config, backend: g.backend, dataDir: g.dataDir });
  const store = await openStore(config, opts);
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
};
