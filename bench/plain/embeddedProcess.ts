/**
 * The job of embedded `passk process --until-caught-up` on a log of trials, in plain code, as its own process: the
 * baseline of the bench's "passk process with its store" line (bench/processStore.ts).
 *   node --import tsx bench/plain/embeddedProcess.ts <dataDir>
 * It opens the same embedded log (SQLite) and store (chDB, migrated) as passk does, then, unit by unit (up to
 * 5,000 records, passk's `maxRows`): reads the trials straight from SQLite, `JSON.parse`s them (no validation),
 * folds each into its row in place (attempts kept, de-duplicated and ordered by the core's rules), builds one
 * `RowStateChanged` per changed row, inserts the unit's `trials` and `row_state` rows through the store's bulk insert
 * (both inserts at once), and once they are durable appends the changelog and commits the offsets in one SQLite
 * transaction. The rows are built by the same mapping passk stores them with (`eventToRow`), so the two stores must
 * hold the same bytes (the bench checks). What it leaves out of passk's job: validation, the version summaries,
 * the gates, datasets and windows topologies, dead letters, the progress lines and the report.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../../deploy/config.ts';
import { openStore } from '../../deploy/store.ts';
import { partitionOf } from '../../log/partitioner.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { plainFold } from './fold.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: embeddedProcess.ts <dataDir>');
const UNIT = 5_000;
const GROUP = 'passk-bench-plain';

const store = await openStore(loadConfig({ dataDir }));
const db = new Database(join(dataDir, 'log.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL'); // passk's embedded log's default
const partitions = db
  .prepare<[string], { partition: number; next_offset: number }>(
    'SELECT partition, next_offset FROM partitions WHERE topic = ? ORDER BY partition',
  )
  .all(TOPICS.trials);
const read = db.prepare<[string, number, number, number], { offset: number; value: Buffer }>(
  'SELECT offset, value FROM records WHERE topic = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?',
);
const changelogPartitions = 4;
db.prepare('INSERT OR IGNORE INTO topics (topic, partitions, created_at) VALUES (?, ?, ?)').run(
  TOPICS.rowstate,
  changelogPartitions,
  Date.now(),
);
for (let p = 0; p < changelogPartitions; p++)
  db.prepare('INSERT OR IGNORE INTO partitions (topic, partition, next_offset) VALUES (?, ?, 0)').run(
    TOPICS.rowstate,
    p,
  );
const next = db.prepare<[string, number], { next_offset: number }>(
  'SELECT next_offset FROM partitions WHERE topic = ? AND partition = ?',
);
const setNext = db.prepare('UPDATE partitions SET next_offset = ? WHERE topic = ? AND partition = ?');
const append = db.prepare(
  'INSERT INTO records (topic, partition, offset, key, value, headers, timestamp) VALUES (?, ?, ?, ?, ?, NULL, ?)',
);
const commit = db.prepare(
  `INSERT INTO group_offsets (group_id, topic, partition, next_offset, committed_at) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = excluded.next_offset,
   committed_at = excluded.committed_at`,
);
/** A unit's changelog appended and its offsets committed, atomically. */
const appendAndCommit = db.transaction(
  (records: readonly { key: string; value: Buffer }[], offsets: ReadonlyMap<number, number>) => {
    const at = new Map<number, number>();
    const now = Date.now();
    for (const r of records) {
      const p = partitionOf(r.key, changelogPartitions);
      const offset = at.get(p) ?? next.get(TOPICS.rowstate, p)!.next_offset;
      append.run(TOPICS.rowstate, p, offset, r.key, r.value, now);
      at.set(p, offset + 1);
    }
    for (const [p, o] of at) setNext.run(o, TOPICS.rowstate, p);
    for (const [p, o] of offsets) commit.run(GROUP, TOPICS.trials, p, o, now);
  },
);

const { fold, rows } = plainFold();
const from = partitions.map(() => 0);
let trials = 0;
/**
 * The next unit, read, folded and serialized: up to UNIT records taken evenly from the partitions with records left
 * (undefined: caught up).
 */
const nextUnit = () => {
  const left = partitions.filter((p, i) => from[i]! < p.next_offset).length;
  if (left === 0) return undefined;
  const unitTrials: TrialRecorded[] = [];
  const offsets = new Map<number, number>();
  for (const [i, { partition, next_offset: end }] of partitions.entries()) {
    if (from[i]! >= end) continue;
    const records = read.all(TOPICS.trials, partition, from[i]!, Math.ceil(UNIT / left));
    for (const rec of records) unitTrials.push(JSON.parse(rec.value.toString('utf8')) as TrialRecorded);
    from[i] = records.at(-1)!.offset + 1;
    offsets.set(partition, from[i]!);
  }
  trials += unitTrials.length;
  return { ...fold(unitTrials), offsets };
};

// one unit's inserts in flight while the next is read and folded; a unit commits once its rows are durable
let inFlight: Promise<void> = Promise.resolve();
for (let unit = nextUnit(); unit; unit = nextUnit()) {
  const u = unit;
  await inFlight;
  inFlight = Promise.all([
    store.insertJsonRows('trials', Buffer.from(`${u.trialLines.join('\n')}\n`)),
    u.stateLines.length > 0
      ? store.insertJsonRows('row_state', Buffer.from(`${u.stateLines.join('\n')}\n`))
      : Promise.resolve(),
  ]).then(() => {
    appendAndCommit(u.changelog, u.offsets);
  });
}
await inFlight;
db.close();
await store.close();
process.stdout.write(`${JSON.stringify({ trials, rows: rows() })}\n`);
