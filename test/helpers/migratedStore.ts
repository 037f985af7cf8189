import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passk } from '../browser/processes.ts';

/**
 * An empty embedded store with every migration applied, made once per test file (`passk migrate` into a data
 * directory of its own) and copied (`cp -a` of the closed store) into the data directories of commands that would
 * otherwise each create one. A new store costs about 0.3 s more CPU than opening a copy (0.8 against 0.5 s for
 * `passk migrate`, the copy ~0.05 s) and 2-3 s more wall under load: since a new store gets the latest tables
 * directly (`NEW_STORE_TABLES`, sinks/clickhouse/migrate.ts) rather than the 37 statements of the migrations (then
 * ~1.3 s of CPU more), so the copy pays off from about three new stores per file. After the first they prove nothing:
 * a store migrated from nothing is the store `passk migrate` leaves, and the tests of migrations themselves
 * (`migrate`, the upgrade tests, `passk demo`, the README's `passk migrate`) still start from nothing.
 */
let template: Promise<string> | undefined;

const migrated = (): Promise<string> =>
  (template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-migrated-store-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const r = await passk(['--data-dir', dir, 'migrate'], { env: { NO_COLOR: '1' } });
    if (r.code !== 0) throw new Error(`passk migrate (the tests' migrated store) exited ${r.code}\n${r.stderr}`);
    return join(dir, 'store');
  })());

/** Puts a copy of the migrated empty store into `dataDir` (made if missing), which must have no store yet. */
export const withMigratedStore = async (dataDir: string): Promise<string> => {
  const from = await migrated();
  mkdirSync(dataDir, { recursive: true });
  await new Promise<void>((resolve, reject) =>
    execFile('cp', ['-a', from, join(dataDir, 'store')], (err, _out, stderr) =>
      err ? reject(new Error(`cp -a: ${stderr}`)) : resolve(),
    ),
  );
  return dataDir;
};
