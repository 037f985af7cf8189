import { startLocalApi } from '../sinks/clickhouse/localApi.ts';
import type { PasskConfig } from './config.ts';
import { storeTarget, type Store } from './store.ts';
import { claimStoreOwner, newLocalToken } from './storeOwner.ts';

/**
 * For a process that holds the embedded store (serve, process): starts its local HTTP API and writes
 * the owner file, so other commands read through it. Nothing to do on a ClickHouse server, which any
 * number of processes can open. Returns what undoes it.
 */
export const shareStore = async (
  config: PasskConfig,
  store: Store,
  command: string,
  folding = true,
): Promise<() => Promise<void>> => {
  if (storeTarget(config).kind !== 'embedded') return async () => {};
  const token = newLocalToken();
  const api = await startLocalApi({ client: store.client, token });
  const release = claimStoreOwner(config.dataDir, { command, url: api.url, token, folding });
  return async () => {
    release();
    await api.close();
  };
};
