import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

/**
 * `synchronous` trade-off, both safe against `kill -9` in WAL mode (a commit is in the WAL, in the
 * OS page cache, before COMMIT returns; the OS writes it out after the process dies):
 * - FULL (default): the WAL is fsynced at every commit, so an acknowledged append also survives a
 *   power cut or kernel crash. Costs one fsync per publish call, so publish in batches.
 * - NORMAL: fsync only at checkpoints; a power cut may lose the last commits. Several times faster
 *   for one-event publishes.
 */
export type Synchronous = 'FULL' | 'NORMAL';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS topics (
  topic TEXT PRIMARY KEY, partitions INTEGER NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
-- next_offset is the high watermark: the offset the next append to the partition gets.
CREATE TABLE IF NOT EXISTS partitions (
  topic TEXT NOT NULL, partition INTEGER NOT NULL, next_offset INTEGER NOT NULL,
  PRIMARY KEY (topic, partition)) WITHOUT ROWID;
-- A rowid table (values can be large); the primary key is a unique index on the position.
CREATE TABLE IF NOT EXISTS records (
  topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
  key TEXT NOT NULL, value BLOB NOT NULL, headers TEXT, timestamp INTEGER NOT NULL,
  PRIMARY KEY (topic, partition, offset));
CREATE TABLE IF NOT EXISTS group_offsets (
  group_id TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, next_offset INTEGER NOT NULL,
  committed_at INTEGER NOT NULL, PRIMARY KEY (group_id, topic, partition)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS group_members (
  group_id TEXT NOT NULL, member_id TEXT NOT NULL, pid INTEGER NOT NULL, topics TEXT NOT NULL,
  expires_at INTEGER NOT NULL, PRIMARY KEY (group_id, member_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS group_leases (
  group_id TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, member_id TEXT NOT NULL,
  PRIMARY KEY (group_id, topic, partition)) WITHOUT ROWID;
`;

const FORMAT_VERSION = '1';

/** Opens (and on first use creates) `<dataDir>/log.sqlite`. Safe to call from several processes at once. */
export const openLogDatabase = (opts: { dataDir: string; synchronous: Synchronous; busyTimeoutMs: number }): Db => {
  mkdirSync(opts.dataDir, { recursive: true });
  const db = new Database(join(opts.dataDir, 'log.sqlite'), { timeout: opts.busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL'); // persistent in the file; readers never block the writer
    db.pragma(`synchronous = ${opts.synchronous}`);
    db.transaction(() => {
      db.exec(SCHEMA);
      const row = db.prepare('SELECT v FROM meta WHERE k = ?').get('format') as { v: string } | undefined;
      if (!row) db.prepare('INSERT INTO meta (k, v) VALUES (?, ?)').run('format', FORMAT_VERSION);
      else if (row.v !== FORMAT_VERSION)
        throw new Error(`${opts.dataDir}/log.sqlite has log format ${row.v}; this passk reads ${FORMAT_VERSION}`);
    }).immediate();
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
};
