import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { CommitRejected } from '../../log/errors.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { fromRowStateChanged } from '../../processors/folds/rowState.ts';
import { checkpointOf, foldTrials, restoreTable, type RowTable } from '../../processors/folds/rowTable.ts';
import { trialTopology, type TrialSink, type TrialTopologyOptions } from '../../processors/index.ts';
import type { EventBatch, EventLog, EventPublisher } from '../../processors/ports.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { rowStateKey, TOPICS } from '../../schemas/topics.ts';
import { trial } from '../helpers/processorFixtures.ts';

/**
 * The trial topology on the embedded log: a unit's changelog is appended in the transaction that commits its offsets
 * (`EventConsumer.publishAndCommit`: one fsync a unit, and never the changelog without the commit or the commit
 * without the changelog); with `closeUnitsWhenCaughtUp`, the last unit closes when the log is read to its end.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'passk-atomic-'));
  dirs.push(d);
  return d;
};

const workload = (rows: number): TrialRecorded[] => {
  const out: TrialRecorded[] = [];
  for (let a = 0; a < 3; a++)
    for (let r = 0; r < rows; r++)
      for (const v of ['v1', 'v2'])
        out.push(trial({ row: `r${r}`, version: v, attempt: a, passed: (r + a) % 3 !== 0 }));
  return out;
};

const straight = (events: readonly TrialRecorded[]): string => {
  const t: RowTable = new Map();
  foldTrials(t, events);
  return JSON.stringify(checkpointOf(t));
};

/** The trial sink as a list of what it was given (the store's port; the test reads back what a store would hold). */
const listSink = () => {
  const rowStates: RowStateChanged[] = [];
  const sink: TrialSink = {
    writeTrials: async (u) => {
      rowStates.push(...u.rowStates);
    },
  };
  return { sink, rows: () => JSON.stringify(checkpointOf(restoreTable(rowStates.map(fromRowStateChanged)))) };
};

/** The changelog records the log file holds. */
const changelogIn = (dir: string): RowStateChanged[] => {
  const db = new Database(join(dir, 'log.sqlite'), { readonly: true });
  try {
    return (
      db.prepare('SELECT value FROM records WHERE topic = ? ORDER BY partition, offset').all(TOPICS.rowstate) as {
        value: Buffer;
      }[]
    ).map((r) => JSON.parse(r.value.toString('utf8')) as RowStateChanged);
  } finally {
    db.close();
  }
};

/** What the log file holds: changelog records, and the trial group's committed offsets. */
const inFile = (dir: string) => {
  const db = new Database(join(dir, 'log.sqlite'), { readonly: true });
  try {
    const changelog = (
      db.prepare('SELECT count(*) AS n FROM records WHERE topic = ?').get(TOPICS.rowstate) as { n: number }
    ).n;
    const committed = db
      .prepare('SELECT partition, next_offset FROM group_offsets WHERE group_id = ? AND topic = ?')
      .all('passk-trials', TOPICS.trials) as { partition: number; next_offset: number }[];
    return { changelog, committed: committed.length };
  } finally {
    db.close();
  }
};

const run = (
  dir: string,
  sink: TrialSink,
  over: Partial<TrialTopologyOptions> = {},
  publisher?: (log: EventLog) => EventPublisher,
) => {
  const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL', consumer: { pollMs: 5 } });
  return lastValueFrom(
    trialTopology(
      { source: log, publisher: publisher?.(log) ?? log.publisher, sink },
      {
        instanceId: 'test',
        producer: 'passk-processors/test',
        partitionOf,
        maxBatch: 20,
        maxRows: 40,
        maxWaitMs: 1,
        untilCaughtUpEveryMs: 5,
        ...over,
      },
    ).pipe(toArray()),
  ).finally(() => log.close());
};

describe('the trial topology on the embedded log: changelog and commit in one transaction', () => {
  it('a commit that fails leaves no changelog behind; the rerun ends where one straight run ends', async () => {
    const dir = dataDir();
    const events = workload(30);
    const seed = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
    await seed.publisher.publish(events);
    await seed.close();
    // the log refuses the trial group's offsets (as a failing disk would refuse the commit's write)
    const admin = new Database(join(dir, 'log.sqlite'));
    admin.exec(`CREATE TRIGGER refuse_offsets BEFORE INSERT ON group_offsets WHEN NEW.group_id = 'passk-trials'
                BEGIN SELECT RAISE(ABORT, 'offsets refused'); END`);
    const store = listSink();
    await expect(run(dir, store.sink)).rejects.toThrow('offsets refused');
    expect(store.rows()).not.toBe('{}'); // the store got the first unit before its commit failed
    // publish then commit (two transactions) left the first unit's changelog appended, uncommitted
    expect(inFile(dir)).toEqual({ changelog: 0, committed: 0 });

    admin.exec('DROP TRIGGER refuse_offsets');
    admin.close();
    const progress = await run(dir, store.sink);
    expect(progress.some((p) => p.committed)).toBe(true);
    expect(store.rows()).toBe(straight(events));
    expect(JSON.stringify(checkpointOf(restoreTable(changelogIn(dir).map(fromRowStateChanged))))).toBe(
      straight(events),
    );
    expect(inFile(dir).committed).toBe(4);
  });

  it('publishes nowhere when its publisher is not the log’s (a replay into the store), and commits', async () => {
    const dir = dataDir();
    const events = workload(30);
    const seed = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
    await seed.publisher.publish(events);
    await seed.close();
    const store = listSink();
    const nowhere = (log: EventLog): EventPublisher => ({ ...log.publisher, publish: async () => {} });
    await run(dir, store.sink, {}, nowhere);
    expect(store.rows()).toBe(straight(events));
    expect(inFile(dir)).toEqual({ changelog: 0, committed: 4 });
  });

  it('closeUnitsWhenCaughtUp: the last unit closes when every partition is read to its end, not at its window', async () => {
    const dir = dataDir();
    const events = workload(30); // 180 trials: 4 units of 40, and 20 left for a last unit
    const seed = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
    await seed.publisher.publish(events);
    await seed.close();
    const store = listSink();
    // a window of 10 minutes: without the flag the run would wait for it before its last commit (the test's timeout)
    const progress = await run(dir, store.sink, { maxWaitMs: 600_000, closeUnitsWhenCaughtUp: true });
    expect(progress.reduce((n, p) => n + p.trials, 0)).toBe(events.length);
    expect(store.rows()).toBe(straight(events));
    expect(inFile(dir).committed).toBe(4);
  }, 30_000);

  it('writes heartbeats and plans without an fsync of their own, appends and commits with one', async () => {
    const dir = dataDir();
    const log = createEmbeddedEventLog({ dataDir: dir }); // synchronous FULL, the default
    // each write records the `synchronous` level of the connection that made it (SQLite's pragma_synchronous)
    const admin = new Database(join(dir, 'log.sqlite'));
    admin.exec(`CREATE TABLE audit (what TEXT, level INTEGER);
      CREATE TRIGGER member_in AFTER INSERT ON group_members
        BEGIN INSERT INTO audit SELECT 'member', synchronous FROM pragma_synchronous(); END;
      CREATE TRIGGER member_up AFTER UPDATE ON group_members
        BEGIN INSERT INTO audit SELECT 'member', synchronous FROM pragma_synchronous(); END;
      CREATE TRIGGER lease AFTER INSERT ON group_leases
        BEGIN INSERT INTO audit SELECT 'lease', synchronous FROM pragma_synchronous(); END;
      CREATE TRIGGER offsets AFTER INSERT ON group_offsets
        BEGIN INSERT INTO audit SELECT 'offsets', synchronous FROM pragma_synchronous(); END;
      CREATE TRIGGER appended AFTER INSERT ON records WHEN NEW.topic = '${TOPICS.trials}'
        BEGIN INSERT INTO audit SELECT 'record', synchronous FROM pragma_synchronous(); END;`);
    try {
      await log.publisher.publish(workload(2));
      const c = await log.consumer({ groupId: 'g', topics: [TOPICS.trials] }); // a heartbeat
      const batch = (await c.batches()[Symbol.asyncIterator]().next()).value as EventBatch; // a plan, its leases
      await c.publishAndCommit!(workload(1), [
        { topic: batch.topic, partition: batch.partition, nextOffset: batch.lastOffset + 1 },
      ]);
      await c.close();
      const audit = admin.prepare('SELECT what, level FROM audit').all() as { what: string; level: number }[];
      const levels = (what: string) => new Set(audit.filter((a) => a.what === what).map((a) => a.level));
      expect(levels('record')).toEqual(new Set([2])); // FULL: an fsync at commit
      expect(levels('offsets')).toEqual(new Set([2]));
      expect(levels('lease')).toEqual(new Set([1])); // NORMAL: synced by the next FULL commit
      expect(levels('member')).toEqual(new Set([1, 2])); // the commit's own heartbeat is in its FULL transaction
    } finally {
      admin.close();
      await log.close();
    }
  });

  it('publishAndCommit: a commit refused for a partition this member does not own keeps the append', async () => {
    const dir = dataDir();
    const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
    try {
      const c = await log.consumer({ groupId: 'passk-trials', topics: [TOPICS.trials] });
      const [t] = workload(1);
      // never iterated: this member holds no partition yet
      await expect(
        c.publishAndCommit!([t!], [{ topic: TOPICS.trials, partition: 0, nextOffset: 1 }]),
      ).rejects.toBeInstanceOf(CommitRejected);
      await c.close();
      expect((await log.committed('passk-trials', TOPICS.trials)).size).toBe(0);
      const hw = new Database(join(dir, 'log.sqlite'), { readonly: true });
      const n = (hw.prepare('SELECT count(*) AS n FROM records WHERE topic = ?').get(TOPICS.trials) as { n: number }).n;
      hw.close();
      expect(n).toBe(1);
    } finally {
      await log.close();
    }
  });
});

/**
 * The restore reads its changelog trusted: a row state in the shape passk writes is taken as parsed, without the
 * schema's check (log/fastValidate.ts). A malformed record there (written by hand, by a broken writer) must not fail
 * every restart: it goes to the dead-letter topic once, with its bytes and the reason, and processing goes on.
 */
describe('the trial topology restoring from a changelog that holds a malformed row state', () => {
  it('dead-letters it once, with its bytes and the reason, and goes on restoring and processing', async () => {
    const dir = dataDir();
    const first = workload(10);
    const later = [3, 4].flatMap((a) =>
      Array.from({ length: 10 }, (_, r) => trial({ row: `r${r}`, version: 'v1', attempt: a, passed: r % 2 === 0 })),
    );
    const letters = async () => {
      const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
      try {
        return await log.deadLetters();
      } finally {
        await log.close();
      }
    };
    const seed = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
    await seed.publisher.publish(first);
    await seed.close();
    const store = listSink();
    const caughtUp = { closeUnitsWhenCaughtUp: true };
    await run(dir, store.sink, caughtUp);
    const written = changelogIn(dir).find((r) => r.row_id === 'r0' && r.agent_version === 'v1')!;

    // a record of row r0 that parses, in passk's shape, but with a seq that is not a number and an attempt record
    // that is not one: the restore's conversion of it threw a TypeError, at every restart
    const bytes = new TextEncoder().encode(
      JSON.stringify({ ...written, seq: String(written.seq + 5), attempt_records: [null] }),
    );
    const raw = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
    await raw.publisher.publishRaw(TOPICS.rowstate, [{ key: rowStateKey(written), value: bytes }]);
    await raw.publisher.publish(later);
    await raw.close();

    // a restart: the restore dead-letters it and restores the rest; the later trials fold onto the restored rows
    const restarted = await run(dir, store.sink, caughtUp);
    expect(restarted.reduce((n, p) => n + p.trials, 0)).toBe(later.length);
    const [letter, ...more] = await letters();
    expect(more).toEqual([]);
    expect(letter!.source.topic).toBe(TOPICS.rowstate);
    expect(Buffer.from(letter!.value).equals(Buffer.from(bytes))).toBe(true);
    expect(letter!.reason).toMatch(/seq|attempt_records/);
    expect(store.rows()).toBe(straight([...first, ...later]));

    // another restart reads it again: it restores, and the record is not dead-lettered twice
    expect((await run(dir, store.sink, caughtUp)).reduce((n, p) => n + p.trials, 0)).toBe(0);
    expect(await letters()).toHaveLength(1);
  }, 60_000);
});
