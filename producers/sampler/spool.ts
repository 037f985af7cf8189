/**
 * Where a capped policy's windows live between an export's answer and their close: each window's candidate count,
 * the trace ids it counted, and its reservoir, in SQLite (WAL), written in one transaction before the export is
 * answered. A process killed with `kill -9` reloads them on start, so no acknowledged candidate, and no
 * Horvitz–Thompson denominator, is lost; a window is removed only once its reservoir is durable in the event log.
 * A closed window's trace ids stay a while after (`closed_seen`, until `forget`): an export answered too late for
 * its client (a timeout, a kill) is sent again, and its traces, counted in the closed window, are not counted again.
 */
import Database from 'better-sqlite3';
import type { TraceInput } from '../sdk/inputs.ts';

export type HeldTrace = Omit<TraceInput, 'sampling'>;

/** A window as the spool keeps it. */
export interface SpooledWindow {
  readonly key: string;
  readonly end: number;
  readonly rate: number;
  readonly seen: readonly string[];
  readonly reservoir: readonly HeldTrace[];
}

/** A closed window's counted trace ids, kept so that a re-sent trace is not counted twice. */
export interface ClosedWindow {
  readonly key: string;
  readonly end: number;
  readonly seen: readonly string[];
}

export interface TraceSpool {
  /** The windows held at the last stop. */
  load(): SpooledWindow[];
  /** The closed windows' trace ids still kept. */
  loadClosed(): ClosedWindow[];
  /** Queues a counted candidate (its trace id) of a window. */
  counted(key: string, window: { end: number; rate: number }, traceId: string): void;
  /** Queues a reservoir slot's new trace. */
  slot(key: string, index: number, trace: HeldTrace): void;
  /** Queues a window's removal (its reservoir was recorded); its counted trace ids are kept until `forget`. */
  closed(key: string): void;
  /** Queues the removal of a closed window's trace ids. */
  forget(key: string): void;
  /** Writes everything queued in one transaction. */
  commit(): void;
  close(): void;
}

export const createSqliteSpool = (path: string): TraceSpool => {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, end_ms INTEGER NOT NULL, rate REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS seen (key TEXT NOT NULL, trace_id TEXT NOT NULL, PRIMARY KEY (key, trace_id));
    CREATE TABLE IF NOT EXISTS slots (key TEXT NOT NULL, idx INTEGER NOT NULL, trace TEXT NOT NULL, PRIMARY KEY (key, idx));
    CREATE TABLE IF NOT EXISTS closed_seen (key TEXT NOT NULL, trace_id TEXT NOT NULL, end_ms INTEGER NOT NULL, PRIMARY KEY (key, trace_id));`);
  const keepClosed = db.prepare(
    'INSERT OR IGNORE INTO closed_seen (key, trace_id, end_ms) SELECT s.key, s.trace_id, w.end_ms FROM seen s JOIN windows w ON w.key = s.key WHERE s.key = ?',
  );
  const forgetClosed = db.prepare('DELETE FROM closed_seen WHERE key = ?');
  const upsertWindow = db.prepare('INSERT OR IGNORE INTO windows (key, end_ms, rate) VALUES (?, ?, ?)');
  const insertSeen = db.prepare('INSERT OR IGNORE INTO seen (key, trace_id) VALUES (?, ?)');
  const upsertSlot = db.prepare('INSERT OR REPLACE INTO slots (key, idx, trace) VALUES (?, ?, ?)');
  const removes = ['windows', 'seen', 'slots'].map((t) => db.prepare(`DELETE FROM ${t} WHERE key = ?`));
  let queue: (() => void)[] = [];
  const run = db.transaction((ops: (() => void)[]) => {
    for (const op of ops) op();
  });
  return {
    load() {
      const windows = db.prepare('SELECT key, end_ms, rate FROM windows').all() as {
        key: string;
        end_ms: number;
        rate: number;
      }[];
      return windows.map((w) => ({
        key: w.key,
        end: w.end_ms,
        rate: w.rate,
        seen: (db.prepare('SELECT trace_id FROM seen WHERE key = ?').all(w.key) as { trace_id: string }[]).map(
          (r) => r.trace_id,
        ),
        reservoir: (
          db.prepare('SELECT trace FROM slots WHERE key = ? ORDER BY idx').all(w.key) as { trace: string }[]
        ).map((r) => JSON.parse(r.trace) as HeldTrace),
      }));
    },
    loadClosed() {
      const rows = db.prepare('SELECT key, trace_id, end_ms FROM closed_seen ORDER BY key').all() as {
        key: string;
        trace_id: string;
        end_ms: number;
      }[];
      const byKey = new Map<string, { key: string; end: number; seen: string[] }>();
      for (const r of rows) {
        let w = byKey.get(r.key);
        if (!w) byKey.set(r.key, (w = { key: r.key, end: r.end_ms, seen: [] }));
        w.seen.push(r.trace_id);
      }
      return [...byKey.values()];
    },
    counted(key, window, traceId) {
      queue.push(() => {
        upsertWindow.run(key, window.end, window.rate);
        insertSeen.run(key, traceId);
      });
    },
    slot(key, index, trace) {
      const text = JSON.stringify(trace);
      queue.push(() => upsertSlot.run(key, index, text));
    },
    closed(key) {
      queue.push(() => {
        keepClosed.run(key);
        for (const r of removes) r.run(key);
      });
    },
    forget(key) {
      queue.push(() => forgetClosed.run(key));
    },
    commit() {
      if (queue.length === 0) return;
      const ops = queue;
      queue = [];
      run(ops);
    },
    close() {
      db.close();
    },
  };
};
