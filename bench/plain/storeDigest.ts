/**
 * What a store holds of the trials and row states, as digests, so two stores can be compared byte for byte (chDB
 * opens one store per process):
 *   node --import tsx bench/plain/storeDigest.ts <dataDir>
 * prints {"trials": {rows, sha256}, "row_state": {rows, sha256}}: every column of `trials`, and of each row's latest
 * `row_state` (FINAL), as JSONEachRow in key order.
 */
import { createHash } from 'node:crypto';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: storeDigest.ts <dataDir>');
const store = await openStore(loadConfig({ dataDir }), { migrate: false });
const digest = async (query: string) => {
  const text = await (await store.client.query({ query, format: 'JSONEachRow' })).text();
  return { rows: text.split('\n').filter(Boolean).length, sha256: createHash('sha256').update(text).digest('hex') };
};
const out = {
  trials: await digest('SELECT * FROM trials FINAL ORDER BY event_id'),
  row_state: await digest('SELECT * FROM row_state FINAL ORDER BY suite, dataset_version, agent_version, row_id'),
};
await store.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
