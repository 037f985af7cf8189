/**
 * Where a capped policy's windows live between an export's answer and their close: each window's candidate count,
 * the trace ids it counted, and its reservoir, in SQLite (WAL), written in one transaction before the export is
 * answered. A process killed with `kill -9` reloads them on start, so no acknowledged candidate, and no
 * Horvitz–Thompson denominator, is lost; a window is removed only once its reservoir is durable in the event log.
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

export interface TraceSpool {
  /** The windows held at the last stop. */
  load(): SpooledWindow[];
  /** Queues a counted candidate (its trace id) of a window. */
  counted(key: string, window: { end: number; rate: number }, traceId: string): void;
  /** Queues a reservoir slot's new trace. */
  slot(key: string, index: number, trace: HeldTrace): void;
  /** Queues a window's removal (its reservoir was recorded). */
  closed(key: string): void;
  /** Writes everything queued in one transaction. */
  commit(): void;
  close(): void;
}

export const createSqliteSpool = (path: string): TraceSpool => {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, end_ms INTEGER NOT NULL, rate REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS seen (key TEXT NOT NULL, trace_id TEXT NOT NULL, PRIMARY KEY (key, trace_id));
    CREATE TABLE IF NOT EXISTS slots (key TEXT NOT NULL, idx INTEGER NOT NULL, trace TEXT NOT NULL, PRIMARY KEY (key, idx));`);
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
        for (const r of removes) r.run(key);
      });
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
