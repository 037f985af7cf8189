import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createEmbeddedEventLog } from '../log/index.ts';
import type { EventLog } from '../processors/ports.ts';
import { partitionOf } from '../log/partitioner.ts';
import { toRowStateChanged } from '../processors/folds/rowState.ts';
import { foldTrials, type RowTable } from '../processors/folds/rowTable.ts';
import { applyRowstate, createGateStore } from '../processors/operators/decideGates.ts';
import { createRowStore } from '../processors/operators/rowStore.ts';
import { createRowstateFeed } from '../processors/operators/rowstateFeed.ts';
import { restoreRows } from '../processors/topologies/trials.ts';
import { readSnapshots } from '../processors/topologies/windows.ts';
import type { RowStateChanged } from '../schemas/events/decisions.ts';
import { rowStateKey, TOPICS } from '../schemas/topics.ts';
import { chunks, syntheticTrials } from './processors.ts';
import { gc, heapAfterGc as heap } from './heap.ts';

/**
 * Restart until ready and memory per row of state (issue #30, item 5), at one attempt per row:
 * - an embedded log holds the changelog of `rows` rows (one RowStateChanged each, as the trial topology wrote it);
 * - passk: the trial topology's restore of every partition (`readToEnd` of passk.rowstate through the log's
 *   consumer, each record decoded and validated, turned into its row state as it comes, the tables and version
 *   summaries built: `RowStore.restoring`), the records handed to the gates' row table 5,000 at a time through
 *   the feed (`RowstateFeed`, `applyRowstate`), and beside it the windows topology's read of the same topic for
 *   its snapshots (`readSnapshots`), as the three run in `passk process`; wall time;
 * - baseline: the same records read straight from the log's SQLite file and `JSON.parse`d into a Map by row key
 *   (no validation, no row state, no summaries: a subset of the work), wall time, alternating with passk;
 * - memory: the retained heap of the restored tables and summaries, and of the gates' row table, after a full GC,
 *   per row.
 * In-process: a whole `passk process` also opens the store and reads its other topics.
 */

export interface RestoreLine {
  readonly rows: number;
  /** Best wall seconds of each, and the median of the paired ratios (baseline ÷ passk). */
  readonly seconds: number;
  readonly baselineSeconds: number;
  readonly ratio: number;
  readonly bytesPerRecord: number;
  readonly bytesPerRow: number;
}

/** The changelog of `rows` rows at one attempt each, published as the trial topology does (trusted). */
export const seedChangelog = async (log: EventLog, rows: number): Promise<{ records: number; bytes: number }> => {
  let records = 0;
  let bytes = 0;
  const trials = [...syntheticTrials({ events: rows, rows: Math.max(1, rows / 4), versions: 4 })];
  for (const part of chunks(trials, 50_000)) {
    const table: RowTable = new Map();
    foldTrials(table, part);
    const changes = [...table.values()].map((s) => toRowStateChanged(s, 'passk-bench/0'));
    for (const c of chunks(changes, 5_000)) await log.publisher.publish(c, { trusted: true });
    records += changes.length;
    bytes += changes.reduce((n, c) => n + JSON.stringify(c).length, 0);
  }
  return { records, bytes };
};

/** The baseline: the changelog's records read straight from the log's SQLite file, `JSON.parse`d into a Map by row key. */
export const parseChangelog = (db: Database.Database): (() => number) => {
  // the value as text (SQLite's UTF-8 to a string), not a buffer decoded: the fastest read of it here
  const read = db
    .prepare<[string], string>('SELECT CAST(value AS TEXT) FROM records WHERE topic = ? ORDER BY partition, offset')
    .pluck();
  return () => {
    const m = new Map<string, RowStateChanged>();
    for (const text of read.iterate(TOPICS.rowstate)) {
      const e = JSON.parse(text) as RowStateChanged;
      m.set(rowStateKey(e), e);
    }
    return m.size;
  };
};

/**
 * passk: the restores of the two topologies that read passk.rowstate, side by side as in `passk process`, the
 * trials' handing what it reads to the gates' row table (processors/topologies/trials.ts and gates.ts).
 */
export const restoreAsPasskDoes = async (log: EventLog, run: string) => {
  const store = createRowStore();
  const gates = createGateStore();
  const feed = createRowstateFeed({ writers: ['trials', 'windows'] });
  const unfollow = feed.follow((events, states) =>
    applyRowstate(gates, events, { versions: new Set(), windows: new Set() }, states),
  );
  const restoring = store.restoring([0, 1, 2, 3], partitionOf, 4);
  await Promise.all([
    restoreRows(log, restoring, { groupId: `bench-restore-${run}`, rowstate: feed }),
    readSnapshots(log, `bench-restore-windows-${run}`),
  ]);
  // the feed's closures (its assignment timer, 120 s) would hold the listener, so the gates' table, past the run
  unfollow();
  return { store, gates, rows: restoring.done() };
};

export async function benchRestore(o: {
  rows: number;
  pairs?: number;
  log?: (line: string) => void;
}): Promise<RestoreLine> {
  const say = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-restore-'));
  const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
  try {
    const { records, bytes } = await seedChangelog(log, o.rows);
    const db = new Database(join(dir, 'log.sqlite'), { readonly: true });
    const baseline = parseChangelog(db);
    let run = 0;
    const passk = () => restoreAsPasskDoes(log, String(++run));
    const wall = async <T>(f: () => T | Promise<T>): Promise<[number, T]> => {
      gc();
      const t = performance.now();
      const r = await f();
      return [(performance.now() - t) / 1000, r];
    };
    const ratios: number[] = [];
    let best = Infinity;
    let bestBaseline = Infinity;
    for (let i = 0; i < (o.pairs ?? 3); i++) {
      const [tb, n] = await wall(baseline);
      const [tc, r] = await wall(passk);
      const gateRows = [...r.gates.rows.values()].reduce((k, t) => k + t.size, 0);
      if (r.rows !== n || n !== records || gateRows !== n)
        throw new Error(`restored ${r.rows} rows (${gateRows} for the gates), parsed ${n}, of ${records}`);
      ratios.push(tb / tc);
      best = Math.min(best, tc);
      bestBaseline = Math.min(bestBaseline, tb);
      say(`restore: ${records} rows: passk ${tc.toFixed(2)} s, JSON.parse into a Map ${tb.toFixed(2)} s`);
    }
    db.close();
    // memory: the restored store and the gates' row table, what a GC frees once they are dropped
    const kept: { restored?: Awaited<ReturnType<typeof passk>> } = { restored: await passk() };
    const held = heap();
    kept.restored?.store.drop([0, 1, 2, 3]);
    kept.restored?.gates.rows.clear();
    delete kept.restored;
    const bytesPerRow = (held - heap()) / records;
    ratios.sort((a, b) => a - b);
    return {
      rows: records,
      seconds: best,
      baselineSeconds: bestBaseline,
      ratio: ratios[Math.floor((ratios.length - 1) / 2)]!, // the lower middle: two pairs give the worse one
      bytesPerRecord: bytes / records,
      bytesPerRow,
    };
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
