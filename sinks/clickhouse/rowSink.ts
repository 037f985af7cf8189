import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { DeadLetter } from '../../processors/ports.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { execInsert, type InsertJsonRows } from './connection.ts';
import { classifyFailure, describeError, SinkClosed, SinkRejected, SinkUnavailable, StoreDiskFull } from './errors.ts';
import { DEFAULT_RETRY, backoffMs, sleep, type RetryPolicy } from '../../schemas/retry.ts';
import { eventToLine } from './rows/eventRows.ts';
import { TABLES, type TableName } from './schema/tables.ts';
import { toDateTime64 } from './time.ts';

export type Row = Record<string, unknown>;

/** The port the processors write through (STYLE §6). `write` may wait (backpressure); `flush` makes everything written so far durable. */
export interface RowSink<R> {
  write(table: string, rows: readonly R[]): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface SinkLogger {
  warn(message: string, context?: Record<string, unknown>): void;
}

export interface ClickHouseRowSinkOptions {
  /** Only `exec` is used, so tests can pass a fake. */
  readonly client: Pick<ClickHouseClient, 'exec'>;
  /** The bulk insert (`StoreClient.insertJsonRows`: chDB's raw insert when embedded). @default execInsert(client) */
  readonly insertJsonRows?: InsertJsonRows;
  /** @default DEFAULT_RETRY (schemas/retry.ts: 5 retries, 100 ms doubling to 5 s), with jitter */
  readonly retry?: RetryPolicy;
  readonly logger?: SinkLogger;
  /** Rows per insert: a table's buffer is written when it reaches this. @default 10000 */
  readonly maxRows?: number;
  /** A non-empty buffer is written at most this long after its first row. @default 1000 */
  readonly maxWaitMs?: number;
  /** Bytes of JSON per insert; a larger batch is split. @default 16 MiB */
  readonly maxBytes?: number;
  /** `write` waits while this many rows are buffered or in flight. @default 4 × maxRows */
  readonly maxBufferedRows?: number;
  /** Rows the store refuses go to `dead_letters` with the reason; false = stop instead. @default true */
  readonly deadLetter?: boolean;
  readonly now?: () => number;
  /**
   * Part of every deduplication token. A replay of the log into a store that lost parts (`passk rebuild`) sends
   * blocks the store may remember having deduplicated (`deduplication_logs` outlive a deleted part): a salt of its
   * own makes them new blocks, while a retry within the replay is still deduplicated. @default ''
   */
  readonly tokenSalt?: string;
}

export interface SinkStats {
  inserts: number;
  rows: number;
  retries: number;
  splits: number;
  deadLettered: number;
}

export interface ClickHouseRowSink extends RowSink<Row> {
  /** Routes events to their tables (`eventToRow`). */
  writeEvents(events: readonly PasskEvent[]): Promise<void>;
  /** Stores records the source could not decode (stage 'decode'). */
  /**
   * `stage`: 'decode' (a record not decoded or valid, the default), 'conflict' (a trial refused by the fold) or
   * 'ingest' (a span or log record `passk ingest` refused or evicted: keyed by its `id`).
   */
  writeDeadLetters(letters: readonly DeadLetter[], stage?: 'decode' | 'conflict' | 'ingest'): Promise<void>;
  stats(): Readonly<SinkStats>;
}

interface Buffer_ {
  lines: string[];
  bytes: number;
}

const positive = (name: string, v: number): number => {
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${name} must be a positive number, got ${v}`);
  return v;
};

/** Splits lines into chunks of at most maxRows rows and maxBytes bytes (a single larger row stays alone). */
const chunk = (lines: readonly string[], maxRows: number, maxBytes: number): string[][] => {
  const out: string[][] = [];
  let cur: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    if (cur.length > 0 && (cur.length >= maxRows || bytes + line.length + 1 > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(line);
    bytes += line.length + 1;
  }
  if (cur.length) out.push(cur);
  return out;
};

/**
 * A batching, retrying, idempotent writer to ClickHouse or chDB.
 *
 * - Rows are buffered per table and inserted when a buffer reaches `maxRows` or `maxWaitMs` after
 *   its first row, whichever comes first: each insert creates a part, so never one per event.
 * - Each insert carries `insert_deduplication_token` = hash of its body, so a retry after an
 *   ambiguous failure (timeout, dropped connection) does not write the block twice; the tables'
 *   ReplacingMergeTree key makes any later replay converge too (docs/store.md).
 * - Transient failures (classified by `ClickHouseError.type`) are retried with backoff; a batch
 *   that is too large, or holds a row the store refuses, is split in halves until the row is found,
 *   and that row goes to `dead_letters` with the reason. Nothing is dropped: when rows cannot be
 *   written nor dead-lettered, they stay buffered and `write`/`flush`/`close` reject with
 *   `SinkUnavailable` or `SinkRejected`, so the consumer stops without committing. A later `flush`
 *   tries them again.
 * - `write` waits while `maxBufferedRows` are buffered (backpressure); `flush` and `close` write everything.
 */
export const createClickHouseRowSink = (opts: ClickHouseRowSinkOptions): ClickHouseRowSink => {
  const maxRows = positive('maxRows', opts.maxRows ?? 10_000);
  const maxWaitMs = opts.maxWaitMs ?? 1_000;
  if (!(maxWaitMs >= 0)) throw new RangeError(`maxWaitMs must be >= 0, got ${maxWaitMs}`);
  const maxBytes = positive('maxBytes', opts.maxBytes ?? 16 * 1024 * 1024);
  const maxBuffered = positive('maxBufferedRows', opts.maxBufferedRows ?? 4 * maxRows);
  if (maxBuffered < maxRows) throw new RangeError('maxBufferedRows must be at least maxRows');
  const retry = opts.retry ?? DEFAULT_RETRY;
  if (retry.retries < 0) throw new RangeError('retry.retries must be >= 0');
  const deadLetter = opts.deadLetter ?? true;
  const now = opts.now ?? Date.now;
  const { client, logger } = opts;
  const insertBody = opts.insertJsonRows ?? execInsert(client);

  const buffers = new Map<TableName, Buffer_>();
  const stats: SinkStats = { inserts: 0, rows: 0, retries: 0, splits: 0, deadLettered: 0 };
  let pending = 0; // rows buffered or in flight
  let timer: ReturnType<typeof setTimeout> | undefined;
  let chain: Promise<void> = Promise.resolve();
  let failure: Error | undefined;
  let closed = false;

  const send = async (table: TableName, lines: readonly string[]): Promise<void> => {
    // encoded to UTF-8 once: the token hashes the bytes sent (the same digest as hashing the text)
    const body = Buffer.from(lines.join('\n') + '\n');
    const token = createHash('sha256')
      .update(opts.tokenSalt ?? '')
      .update(table)
      .update('\n')
      .update(body)
      .digest('hex')
      .slice(0, 40);
    // The store's name of the table, which may carry a version (production_windows → production_windows_v2).
    await insertBody(TABLES[table].name, body, { insert_deduplication_token: token });
    stats.inserts++;
    stats.rows += lines.length;
  };

  const keyOf = (table: TableName, line: string): string => {
    try {
      const row = JSON.parse(line) as Row;
      return TABLES[table].key.map((k) => String(row[k])).join('/');
    } catch {
      return createHash('sha256').update(line).digest('hex').slice(0, 32);
    }
  };

  const sendDeadLetter = async (table: TableName, line: string, reason: string): Promise<void> => {
    if (!deadLetter || table === 'dead_letters')
      throw new SinkRejected(`the store refused a row of ${table}: ${reason}`, table, 1);
    const letter = {
      id: `${table}/${keyOf(table, line)}`,
      recorded_at: toDateTime64(now()),
      stage: 'sink',
      source_topic: '',
      source_partition: -1,
      source_offset: -1,
      source_key: '',
      target_table: table,
      value_base64: Buffer.from(line).toString('base64'),
      reason,
    };
    await insert('dead_letters', [JSON.stringify(letter)]);
    stats.deadLettered++;
    logger?.warn('row dead-lettered', { table, reason });
  };

  /** Inserts with retries; splits on too-large or bad-row refusals. Throws only when rows cannot be stored. */
  const insert = async (table: TableName, lines: readonly string[]): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(table, lines);
      } catch (e) {
        const kind = classifyFailure(e);
        if (kind === 'transient') {
          if (attempt < retry.retries) {
            stats.retries++;
            logger?.warn('insert failed, retrying', { table, attempt: attempt + 1, error: describeError(e) });
            await sleep(backoffMs(retry, attempt, Math.random));
            continue;
          }
          throw new SinkUnavailable(
            `insert into ${table} failed after ${retry.retries} retries: ${describeError(e)}`,
            e,
          );
        }
        // a full disk blames no row (splitting would dead-letter good rows one by one): stop, nothing written
        if (kind === 'disk_full') throw new StoreDiskFull(table, e);
        if (kind === 'fatal')
          throw new SinkRejected(`insert into ${table} refused: ${describeError(e)}`, table, lines.length, e);
        if (lines.length === 1) return sendDeadLetter(table, lines[0]!, describeError(e));
        stats.splits++;
        const half = Math.ceil(lines.length / 2);
        await insert(table, lines.slice(0, half));
        return insert(table, lines.slice(half));
      }
    }
  };

  /**
   * Writes every buffer, the tables at once (each table's chunks in order): their inserts overlap in the store
   * rather than wait on one another. What a table cannot write goes back to the front of its buffer.
   */
  const flushCycle = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const taken = [...buffers.entries()].filter(([, b]) => b.lines.length > 0);
    for (const [table] of taken) buffers.set(table, { lines: [], bytes: 0 });
    const writeTable = async (table: TableName, lines: string[]): Promise<void> => {
      const chunks = chunk(lines, maxRows, maxBytes);
      for (let j = 0; j < chunks.length; j++) {
        try {
          await insert(table, chunks[j]!);
          pending -= chunks[j]!.length;
        } catch (e) {
          failure ??= e as Error;
          // put back this chunk and the rest of this table, ahead of newer rows
          const rest = chunks.slice(j).flat();
          const cur = buffers.get(table) ?? { lines: [], bytes: 0 };
          const merged = [...rest, ...cur.lines];
          buffers.set(table, { lines: merged, bytes: merged.reduce((s, l) => s + l.length + 1, 0) });
          return;
        }
      }
    };
    await Promise.all(taken.map(([table, buf]) => writeTable(table, buf.lines)));
  };

  const kick = (): Promise<void> => {
    chain = chain.then(() => (failure ? undefined : flushCycle()));
    return chain;
  };

  const usable = (): void => {
    if (closed) throw new SinkClosed();
    if (failure) throw failure;
  };

  const write = async (table: string, rows: readonly Row[]): Promise<void> =>
    writeLines(
      table,
      rows.map((row) => JSON.stringify(row)),
    );

  /** `write` of rows already serialized, one JSON object per line. */
  const writeLines = async (table: string, lines: readonly string[]): Promise<void> => {
    usable();
    if (!Object.hasOwn(TABLES, table)) throw new RangeError(`unknown table: ${table}`);
    if (lines.length === 0) return;
    const name = table as TableName;
    const buf = buffers.get(name) ?? { lines: [], bytes: 0 };
    buffers.set(name, buf);
    for (const line of lines) {
      buf.lines.push(line);
      buf.bytes += line.length + 1;
    }
    pending += lines.length;
    if (buf.lines.length >= maxRows || buf.bytes >= maxBytes) void kick();
    else if (!timer) timer = setTimeout(() => void kick(), maxWaitMs);
    while (pending >= maxBuffered && !failure) await kick();
    if (failure) throw failure;
  };

  const flush = async (): Promise<void> => {
    if (closed) throw new SinkClosed();
    failure = undefined; // an explicit flush tries failed rows again
    await kick();
    if (pending > 0 && !failure) await kick(); // rows written while the first cycle ran
    if (failure) throw failure;
  };

  return {
    write,
    flush,
    async writeEvents(events) {
      const byTable = new Map<TableName, string[]>();
      for (const e of events) {
        const stored = eventToLine(e);
        if (!stored) continue;
        const { table, line } = stored;
        const list = byTable.get(table) ?? [];
        list.push(line);
        byTable.set(table, list);
      }
      for (const [table, lines] of byTable) await writeLines(table, lines);
    },
    async writeDeadLetters(letters, stage = 'decode') {
      await write(
        'dead_letters',
        letters.map((l) => ({
          id: l.id ?? `${l.source.topic}/${l.source.partition}/${l.source.offset}`,
          recorded_at: toDateTime64(now()),
          stage,
          source_topic: l.source.topic,
          source_partition: l.source.partition,
          source_offset: l.source.offset,
          source_key: l.source.key,
          target_table: '',
          value_base64: Buffer.from(l.value).toString('base64'),
          reason: l.reason,
        })),
      );
    },
    async close() {
      if (closed) return;
      try {
        await flush();
      } finally {
        closed = true;
        if (timer) clearTimeout(timer);
      }
    },
    stats: () => ({ ...stats }),
  };
};
