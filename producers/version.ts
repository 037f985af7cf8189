import { existsSync, readFileSync } from 'node:fs';

/**
 * The package's version, read from its package.json: the one version source, for every event's `producer` field
 * and `passk --version`. From the sources that file is ../package.json; built (dist/producers/version.js), it is
 * ../../package.json.
 */
const packageJson = ['../package.json', '../../package.json']
  .map((p) => new URL(p, import.meta.url))
  .find((u) => existsSync(u) && (JSON.parse(readFileSync(u, 'utf8')) as { name?: string }).name === 'passk');
if (!packageJson) throw new Error(`passk: no package.json of passk above ${import.meta.url}`);

/** Version written into every event's `producer` field (and printed by `passk --version`). */
export const PRODUCER_VERSION = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
