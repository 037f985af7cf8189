import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BackendUnavailable } from '../../schemas/errors.ts';

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
-- The identities of the dead letters without a log position (ingest's), so each is appended once.
CREATE INDEX IF NOT EXISTS records_dlq_id ON records (json_extract(headers, '$."passk.dlq.id"'))
  WHERE topic = 'passk.dlq';
-- The keys of the changelog by position, for the reads that want a few of its records by key (the windows'
-- snapshots at a restore, the gates' reload of a version): a scan of this index, not of every record's value.
-- Built on the first open of a log written before it (once; older passk keep it up to date as any index).
CREATE INDEX IF NOT EXISTS records_rowstate_keys ON records (partition, offset, key) WHERE topic = 'passk.rowstate';
-- Each key's records on the topics read by key (KEY_INDEXED_TOPICS, store.ts: the gates' reload of an evicted version's
-- row states, of a candidate's closed runs): a range of these, not a scan of the topic. Partial, one per topic (a
-- query names its topic as a literal, so SQLite can use them): passk.trials' appends do not pay for them. Built on
-- the first open of a log written before them (once, in the open's transaction; older passk keep them up to date).
CREATE INDEX IF NOT EXISTS records_rowstate_by_key ON records (key, partition, offset) WHERE topic = 'passk.rowstate';
CREATE INDEX IF NOT EXISTS records_decisions_by_key ON records (key, partition, offset) WHERE topic = 'passk.decisions';
-- The keys of passk.rowstate that do not have exactly three separators (char 31, KEY_SEP): the snapshots' and those
-- whose ids hold KEY_SEP, a few among millions of row states. With records_rowstate_by_key, the gates' restore by key
-- finds every version and every such key without a walk of every key (ROWSTATE_ODD, store.ts: the same expression).
CREATE INDEX IF NOT EXISTS records_rowstate_odd ON records (key, partition, offset)
  WHERE topic = 'passk.rowstate' AND length(key) - length(replace(key, char(31), '')) <> 3;
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

/** The refusal of a file that is not a passk log: one line naming the file and the cause; the file is left as it is. */
const refused = (file: string, why: string, cause?: unknown): BackendUnavailable =>
  new BackendUnavailable(
    `${file} ${why}: refused, not replaced (move it away to start a new log, or restore it from a backup)`,
    cause,
  );

/** SQLite's own word for a file that is not a database or is damaged (its typed `code`), else undefined. */
const damage = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (code === 'SQLITE_NOTADB') return 'is not a SQLite database';
  if (code === 'SQLITE_CORRUPT') return 'is damaged (SQLite: the database disk image is malformed)';
  return undefined;
};

/** A file that is there and empty: a new log being created by another process for a moment, else refused. */
const emptyFile = (file: string): boolean => {
  for (let i = 0; i < 20; i++) {
    if (!existsSync(file) || statSync(file).size > 0) return false;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25); // another process's create: a few ms
  }
  return true;
};

/** Refuses an existing file that is not a passk log, read only: another application's database is left as it is. */
const inspect = (file: string): void => {
  let db: Db | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
      (t) => t.name,
    );
    if (tables.length > 0 && !tables.includes('meta'))
      throw refused(file, `is another application's SQLite database (tables ${tables.slice(0, 3).join(', ')})`);
  } catch (e) {
    const why = damage(e);
    throw why ? refused(file, why, e) : e;
  } finally {
    db?.close();
  }
};

/** The indexes by key a log written before them lacks (built by its first open by this passk). */
const missingKeyIndexes = (db: Db): boolean => {
  const names = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as { name: string }[]).map(
      (t) => t.name,
    ),
  );
  const built = ['records_rowstate_by_key', 'records_decisions_by_key', 'records_rowstate_odd'];
  return names.has('records') && !built.every((n) => names.has(n));
};

/**
 * The records an open of this log scans to build the indexes by key (a log written before them: once), else 0. Read
 * before the open's transaction, so its notice is out before the build holds the write lock.
 */
const indexesToBuild = (db: Db): number =>
  missingKeyIndexes(db) ? (db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n : 0;

/**
 * `<file>.index-build`: written by the open that builds the indexes by key, inside its write transaction (so only
 * the process that holds the lock writes it), removed when that transaction ends. Another process whose open gets
 * SQLITE_BUSY meanwhile sees it and waits for the build, however long it takes, instead of failing after its busy
 * timeout (issue 26: 7–8 s per 1M records; from 1.2–1.4M records the 10 s timeout ran out).
 */
const buildMarker = (file: string): string => `${file}.index-build`;

/** The process building this log's indexes (its marker names a live process), else undefined. */
const liveIndexBuild = (file: string): { pid: number; records: number } | undefined => {
  let build: { pid: number; records: number };
  try {
    build = JSON.parse(readFileSync(buildMarker(file), 'utf8')) as { pid: number; records: number };
  } catch {
    return undefined; // none, or being written this instant (the next try reads it)
  }
  if (!Number.isInteger(build.pid) || build.pid <= 0 || build.pid === process.pid) return undefined;
  try {
    process.kill(build.pid, 0);
    return build;
  } catch (e) {
    // EPERM: alive, another user's; ESRCH: gone (a build killed mid-way is rolled back; its marker is stale)
    return (e as { code?: string }).code === 'EPERM' ? build : undefined;
  }
};

const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

/**
 * Opens (and on first use creates) `<dataDir>/log.sqlite`. Safe to call from several processes at once.
 * A file there that is not a passk log — empty (0 bytes), not a SQLite database, damaged, or another
 * application's database — is refused with BackendUnavailable (exit 3), never replaced by a new empty log.
 */
export const openLogDatabase = (opts: { dataDir: string; synchronous: Synchronous; busyTimeoutMs: number }): Db => {
  mkdirSync(opts.dataDir, { recursive: true });
  const file = join(opts.dataDir, 'log.sqlite');
  if (emptyFile(file)) throw refused(file, 'is empty (0 bytes), not a passk log');
  if (existsSync(file)) inspect(file);
  const db = new Database(file, { timeout: opts.busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL'); // persistent in the file; readers never block the writer
    db.pragma(`synchronous = ${opts.synchronous}`);
    const upgrade = indexesToBuild(db);
    // another process builds them now: this open waits for it (said once its busy timeout has run out, below)
    let waitingFor: number | undefined;
    if (upgrade > 0 && !liveIndexBuild(file))
      process.stderr.write(
        `passk: upgrading ${file}: building its indexes by key, a scan of all ${upgrade} records (once; other ` +
          `writers to this log wait meanwhile: about 8 s per 1M records of 1.5 KB)\n`,
      );
    let marked = false;
    const schema = db.transaction(() => {
      const tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
      ).map((t) => t.name);
      if (tables.length > 0 && !tables.includes('meta'))
        throw refused(file, `is another application's SQLite database (tables ${tables.slice(0, 3).join(', ')})`);
      if (missingKeyIndexes(db)) {
        // this open builds them (it holds the write lock): other opens that find the lock taken wait for it
        try {
          writeFileSync(buildMarker(file), JSON.stringify({ pid: process.pid, records: upgrade }));
          marked = true;
        } catch {
          // best effort (a full disk): without it other opens wait their busy timeout only, as before
        }
      }
      db.exec(SCHEMA);
      const row = db.prepare('SELECT v FROM meta WHERE k = ?').get('format') as { v: string } | undefined;
      if (!row) db.prepare('INSERT INTO meta (k, v) VALUES (?, ?)').run('format', FORMAT_VERSION);
      else if (row.v !== FORMAT_VERSION)
        throw new Error(`${opts.dataDir}/log.sqlite has log format ${row.v}; this passk reads ${FORMAT_VERSION}`);
    });
    // BEGIN IMMEDIATE waits up to busy_timeout for the write lock. Another open's index build holds it longer on a
    // large log: while that build runs (its marker names a live process), or when it ended between the timeout and
    // this check (the indexes are there now: once), take the lock again rather than fail with SQLITE_BUSY.
    let lateRetry = upgrade > 0;
    for (;;) {
      try {
        schema.immediate();
        break;
      } catch (e) {
        if (!isBusy(e)) throw e;
        const build = liveIndexBuild(file);
        if (build) {
          if (build.pid !== waitingFor)
            process.stderr.write(
              `passk: waiting for process ${(waitingFor = build.pid)}, which is building the indexes by key of ${file} ` +
                `(once, a scan of ${build.records} records: about 8 s per 1M records of 1.5 KB; waited ` +
                `${opts.busyTimeoutMs} ms so far, the busy timeout, and waits on until it is done)\n`,
            );
        } else if (lateRetry && !missingKeyIndexes(db)) lateRetry = false;
        else throw e;
      } finally {
        if (marked) rmSync(buildMarker(file), { force: true });
        marked = false;
      }
    }
    return db;
  } catch (e) {
    db.close();
    const why = damage(e);
    throw why ? refused(file, why, e) : e;
  }
};
