import type { RawRecord, RowstateOutline } from '../../processors/ports.ts';
import { DLQ_HEADERS, type DeadLetterRecord } from '../deadLetters.ts';
import { TOPICS } from '../../schemas/topics.ts';
import type { Db } from './database.ts';
import { isSnapshotKey, KEY_SEP, tpKey } from '../../schemas/topics.ts';

export interface AppendRecord {
  readonly topic: string;
  readonly key: string;
  readonly value: Uint8Array;
  readonly headers?: Record<string, string>;
}

export interface StoredRecord extends RawRecord {
  readonly headers: Record<string, string>;
}

/** Records, topics and high watermarks: the append-only part of the embedded log. */
export interface LogStore {
  /** Creates the topic with `defaultPartitions` unless it exists; returns its partition count. */
  ensureTopic(topic: string): number;
  /** Appends all records in one `BEGIN IMMEDIATE` transaction: all or nothing, durable on return. */
  append(
    records: readonly AppendRecord[],
    partitionOf: (key: string, partitions: number) => number,
  ): { topic: string; partition: number; offset: number }[];
  /**
   * Appends to the dead-letter topic the letters whose identity (source position, or `passk.dlq.id`) it does not
   * hold yet, in one
   * `BEGIN IMMEDIATE` transaction (so two processes never both append one); returns how many it appended.
   */
  appendDeadLetters(
    letters: readonly DeadLetterRecord[],
    partitionOf: (key: string, partitions: number) => number,
  ): number;
  /**
   * Records from `fromOffset` on, at most `limit` of them and, past the first, at most `maxBytes` of values.
   * `keys` (`ConsumerOptions.keys`): a record whose key it refuses is read from SQLite by its key alone and left
   * out, but for the last one read, which comes without its value and headers (empty) to tell how far the read got;
   * the consumer skips it by the same key.
   */
  read(
    topic: string,
    partition: number,
    fromOffset: number,
    limit: number,
    maxBytes?: number,
    keys?: (key: string) => boolean,
  ): StoredRecord[];
  /**
   * `read` with `keys`, through the log's index by key (KEY_INDEXED_TOPICS): only the records whose key starts with one
   * of `prefixes` are looked at (the others are not read at all), those `keys` accepts returned in offset order from
   * `fromOffset`, below `high`, at most `limit` of them and, past the first, at most `maxBytes` of values. `lastOffset`
   * is how far the read got: the last record returned, or `high - 1` when none is left below `high`. Undefined for a
   * topic without the index, or an empty prefix: the caller scans (`read`).
   */
  readByPrefixes(
    topic: string,
    partition: number,
    range: { fromOffset: number; high: number; limit: number; maxBytes?: number },
    prefixes: readonly string[],
    keys: (key: string) => boolean,
  ): { records: StoredRecord[]; lastOffset: number } | undefined;
  /**
   * passk.rowstate's keys in outline (`RowstateOutline`), in one read transaction (so `ends` and the keys agree): the
   * versions by a skip over records_rowstate_by_key (one seek per version, not one step per key), the other keys by
   * records_rowstate_odd. O(versions + odd keys), whatever number of row states the topic holds; with `versions`
   * false, the versions are left out (empty: no seek per version) and it is O(odd keys).
   */
  rowstateOutline(o?: { readonly versions?: boolean }): RowstateOutline;
  /**
   * `read` for a consumer of events: each record's offset, key and value as text (SQLite's own UTF-8 to a string,
   * no buffer per record: half of the read's cost), `maxBytes` counted in characters. The text is V8's decoding,
   * which turns a bad byte sequence into U+FFFD and keeps a byte order mark: `valueAt` gives the bytes.
   */
  readTexts(topic: string, partition: number, fromOffset: number, limit: number, maxBytes?: number): TextRecord[];
  /** The value of the record at a position, as stored. */
  valueAt(topic: string, partition: number, offset: number): Uint8Array;
  /**
   * Next offset per partition of each topic (`topic` → partition → next offset). The same maps are returned again
   * while no connection has changed the log since (read only: not to be changed by the caller).
   */
  highWatermarks(topics: readonly string[]): ReadonlyMap<string, ReadonlyMap<number, number>>;
}

/** A record as `readTexts` reads it. */
export interface TextRecord {
  readonly offset: number;
  readonly key: string;
  readonly text: string;
}

const NO_VALUE = new Uint8Array(0);

/**
 * The topics with an index by key (database.ts), and its name. Each is read by a query naming the topic as a literal
 * (a partial index serves only a query whose WHERE names its topic so).
 */
export const KEY_INDEXES: Readonly<Record<string, string>> = {
  [TOPICS.rowstate]: 'records_rowstate_by_key',
  [TOPICS.decisions]: 'records_decisions_by_key',
};
export const KEY_INDEXED_TOPICS: readonly string[] = Object.keys(KEY_INDEXES);

/**
 * One key range's records of an indexed topic in one partition and offset range. The index is named: without
 * statistics SQLite's planner takes the (partition, offset) range of `records_rowstate_keys` for the narrower one,
 * and would walk every key of the partition.
 */
export const byKeyQuery = (topic: string): string =>
  `SELECT offset, key FROM records INDEXED BY ${KEY_INDEXES[topic]} WHERE topic = '${topic}' AND key >= ? AND key < ?
     AND partition = ? AND offset >= ? AND offset < ?`;

/**
 * The least string above every string that starts with `prefix`, in SQLite's order (BINARY: UTF-8 bytes, which is
 * code point order): the prefix with its last code point one higher. Undefined when there is none (U+10FFFF last).
 */
export const prefixEnd = (prefix: string): string | undefined => {
  const chars = [...prefix]; // by code point
  const last = chars.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return undefined;
  return chars.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
};

/**
 * The partial index records_rowstate_odd's condition (database.ts), word for word: a query names it so for SQLite to
 * use the index. A key with any number of separators but three: not a row state's four parts (`rowKey`).
 */
export const ROWSTATE_ODD = `topic = '${TOPICS.rowstate}' AND length(key) - length(replace(key, char(31), '')) <> 3`;

/** Where the third KEY_SEP of a key is, or -1. */
const thirdSep = (key: string): number => {
  const a = key.indexOf(KEY_SEP);
  const b = a < 0 ? -1 : key.indexOf(KEY_SEP, a + 1);
  return b < 0 ? -1 : key.indexOf(KEY_SEP, b + 1);
};

/** A record without headers (most): one shared, frozen empty object, not a new one per record read. */
const NO_HEADERS = Object.freeze({}) as Record<string, string>;

const parseHeaders = (text: string | null): Record<string, string> =>
  text ? (JSON.parse(text) as Record<string, string>) : NO_HEADERS;

export const createLogStore = (db: Db, opts: { defaultPartitions: number; now: () => number }): LogStore => {
  const partitionCount = new Map<string, number>(); // partition counts never change once created
  const q = {
    topic: db.prepare<[string], { partitions: number }>('SELECT partitions FROM topics WHERE topic = ?'),
    addTopic: db.prepare('INSERT OR IGNORE INTO topics (topic, partitions, created_at) VALUES (?, ?, ?)'),
    addPartition: db.prepare('INSERT OR IGNORE INTO partitions (topic, partition, next_offset) VALUES (?, ?, 0)'),
    next: db.prepare<[string, number], { next_offset: number }>(
      'SELECT next_offset FROM partitions WHERE topic = ? AND partition = ?',
    ),
    setNext: db.prepare('UPDATE partitions SET next_offset = ? WHERE topic = ? AND partition = ?'),
    insert: db.prepare(
      'INSERT INTO records (topic, partition, offset, key, value, headers, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    read: db.prepare<
      [string, number, number, number],
      { offset: number; key: string; value: Buffer; headers: string | null; timestamp: number }
    >(
      'SELECT offset, key, value, headers, timestamp FROM records WHERE topic = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?',
    ),
    readKeys: db.prepare<[string, number, number, number], { offset: number; key: string }>(
      'SELECT offset, key FROM records WHERE topic = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?',
    ),
    // the literal topic is that of the partial index records_rowstate_keys (database.ts), which covers the query
    readChangelogKeys: db.prepare<[number, number, number], { offset: number; key: string }>(
      `SELECT offset, key FROM records WHERE topic = '${TOPICS.rowstate}' AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?`,
    ),
    // per indexed topic, its literal in the query (the partial index's WHERE); the key range is the index's first column
    byKey: new Map(
      KEY_INDEXED_TOPICS.map((topic) => [
        topic,
        db.prepare<[string, string, number, number, number], [number, string]>(byKeyQuery(topic)).raw(),
      ]),
    ),
    // per indexed topic, one key range's records in offset order, at most a limit (the index's range, sorted by SQLite)
    byKeyFirst: new Map(
      KEY_INDEXED_TOPICS.map((topic) => [
        topic,
        db
          .prepare<[string, string, number, number, number, number], [number, string]>(
            `${byKeyQuery(topic)} ORDER BY offset LIMIT ?`,
          )
          .raw(),
      ]),
    ),
    // the outline of passk.rowstate (`rowstateOutline`): the first key from one, past one, the first of a range with
    // no KEY_SEP past its start, and the odd keys
    firstKeyFrom: db
      .prepare<[string], string>(
        `SELECT key FROM records INDEXED BY ${KEY_INDEXES[TOPICS.rowstate]} WHERE topic = '${TOPICS.rowstate}'
           AND key >= ? ORDER BY key LIMIT 1`,
      )
      .pluck(),
    firstKeyAfter: db
      .prepare<[string], string>(
        `SELECT key FROM records INDEXED BY ${KEY_INDEXES[TOPICS.rowstate]} WHERE topic = '${TOPICS.rowstate}'
           AND key > ? ORDER BY key LIMIT 1`,
      )
      .pluck(),
    exactIn: db
      .prepare<[string, string, string], number>(
        `SELECT 1 FROM records INDEXED BY ${KEY_INDEXES[TOPICS.rowstate]} WHERE topic = '${TOPICS.rowstate}'
           AND key >= ? AND key < ? AND instr(substr(key, length(?) + 1), char(31)) = 0 LIMIT 1`,
      )
      .pluck(),
    // per odd key and partition, its first and latest offsets (`RowstateOutline.oddFrom`), in the index's order
    oddSpans: db
      .prepare<[], [string, number, number, number]>(
        `SELECT key, partition, min(offset), max(offset) FROM records INDEXED BY records_rowstate_odd
           WHERE ${ROWSTATE_ODD} GROUP BY key, partition`,
      )
      .raw(),
    partitionEnds: db.prepare<[string], { partition: number; next_offset: number }>(
      'SELECT partition, next_offset FROM partitions WHERE topic = ?',
    ),
    // raw: an array per row, not an object with its column names
    readTexts: db
      .prepare<[string, number, number, number], [number, string, string]>(
        'SELECT offset, key, CAST(value AS TEXT) FROM records WHERE topic = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?',
      )
      .raw(),
    value: db.prepare<[string, number, number], { value: Buffer; headers: string | null; timestamp: number }>(
      'SELECT value, headers, timestamp FROM records WHERE topic = ? AND partition = ? AND offset = ?',
    ),
    dlqHas: db.prepare<[string, string, string, string], { x: number }>(
      `SELECT 1 AS x FROM records WHERE topic = ?
         AND json_extract(headers, '$."${DLQ_HEADERS.topic}"') = ?
         AND json_extract(headers, '$."${DLQ_HEADERS.partition}"') = ?
         AND json_extract(headers, '$."${DLQ_HEADERS.offset}"') = ? LIMIT 1`,
    ),
    // the literal topic and expression are those of the partial index records_dlq_id (database.ts)
    dlqHasId: db.prepare<[string], { x: number }>(
      `SELECT 1 AS x FROM records WHERE topic = 'passk.dlq'
         AND json_extract(headers, '$."passk.dlq.id"') = ? LIMIT 1`,
    ),
    watermarks: db.prepare<[string], { topic: string; partition: number; next_offset: number }>(
      'SELECT topic, partition, next_offset FROM partitions WHERE topic IN (SELECT value FROM json_each(?))',
    ),
  };

  // Watermarks are asked far more often than they move: every idle consumer of the process (about ten in `passk
  // process`) asks at each poll (50 ms). A read is kept while SQLite's data_version (which moves when another
  // connection commits: another process, the append worker) and this connection's count of writes to `partitions`
  // both stay; inside a transaction nothing is kept or reused (what it wrote may yet be rolled back).
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let ownWrites = 0;
  const keptWatermarks = new Map<
    string,
    { version: number; own: number; hw: ReadonlyMap<string, ReadonlyMap<number, number>> }
  >();

  const createTopic = db.transaction((topic: string): number => {
    ownWrites++;
    const existing = q.topic.get(topic);
    if (existing) return existing.partitions;
    q.addTopic.run(topic, opts.defaultPartitions, opts.now());
    for (let p = 0; p < opts.defaultPartitions; p++) q.addPartition.run(topic, p);
    return opts.defaultPartitions;
  });

  const ensureTopic = (topic: string): number => {
    let n = partitionCount.get(topic);
    if (n === undefined) {
      n = q.topic.get(topic)?.partitions ?? createTopic.immediate(topic);
      partitionCount.set(topic, n);
    }
    return n;
  };

  const appendTx = db.transaction(
    (
      records: readonly AppendRecord[],
      partitionOf: (key: string, n: number) => number,
      counts: Map<string, number>,
    ) => {
      ownWrites++;
      const now = opts.now();
      const next = new Map<string, number>();
      const out: { topic: string; partition: number; offset: number }[] = [];
      for (const r of records) {
        const partition = partitionOf(r.key, counts.get(r.topic)!);
        const id = tpKey({ topic: r.topic, partition });
        const offset = next.get(id) ?? q.next.get(r.topic, partition)!.next_offset;
        q.insert.run(r.topic, partition, offset, r.key, r.value, r.headers ? JSON.stringify(r.headers) : null, now);
        next.set(id, offset + 1);
        out.push({ topic: r.topic, partition, offset });
      }
      for (const [id, offset] of next) {
        const [topic, partition] = id.split(KEY_SEP) as [string, string];
        q.setNext.run(offset, topic, Number(partition));
      }
      return out;
    },
  );

  const appendDeadLettersTx = db.transaction(
    (letters: readonly DeadLetterRecord[], partitionOf: (key: string, n: number) => number, partitions: number) => {
      const seen = new Set<string>();
      const fresh = letters.filter((l) => {
        const id = l.headers[DLQ_HEADERS.id];
        if (id !== undefined) {
          if (seen.has(`id\u0000${id}`)) return false;
          seen.add(`id\u0000${id}`);
          return q.dlqHasId.get(id) === undefined;
        }
        const at = [
          l.headers[DLQ_HEADERS.topic]!,
          l.headers[DLQ_HEADERS.partition]!,
          l.headers[DLQ_HEADERS.offset]!,
        ] as const;
        const position = at.join('\u0000');
        if (seen.has(position)) return false;
        seen.add(position);
        return q.dlqHas.get(TOPICS.dlq, ...at) === undefined;
      });
      if (fresh.length > 0)
        appendTx(
          fresh.map((l) => ({ topic: TOPICS.dlq, ...l })),
          partitionOf,
          new Map([[TOPICS.dlq, partitions]]),
        );
      return fresh.length;
    },
  );

  return {
    ensureTopic,
    append: (records, partitionOf) => {
      const counts = new Map<string, number>();
      for (const r of records) if (!counts.has(r.topic)) counts.set(r.topic, ensureTopic(r.topic));
      return appendTx.immediate(records, partitionOf, counts);
    },
    appendDeadLetters: (letters, partitionOf) =>
      letters.length === 0 ? 0 : appendDeadLettersTx.immediate(letters, partitionOf, ensureTopic(TOPICS.dlq)),
    read: (topic, partition, fromOffset, limit, maxBytes = Infinity, keys) => {
      const out: StoredRecord[] = [];
      if (keys !== undefined) {
        // the values of the few records wanted, each by its position (not while the scan's iterator is open); the
        // others are not returned (a restore's read of passk.rowstate for its snapshots skips every row state), but
        // for the last, whose offset is where the next read starts
        const rows =
          topic === TOPICS.rowstate
            ? q.readChangelogKeys.all(partition, fromOffset, limit)
            : q.readKeys.all(topic, partition, fromOffset, limit);
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!;
          const wanted = keys(r.key);
          if (!wanted && i < rows.length - 1) continue;
          const v = wanted ? q.value.get(topic, partition, r.offset) : undefined;
          const value = v ? new Uint8Array(v.value.buffer, v.value.byteOffset, v.value.byteLength) : NO_VALUE;
          out.push({
            topic,
            partition,
            offset: r.offset,
            key: r.key,
            value,
            timestamp: v?.timestamp ?? 0,
            headers: parseHeaders(v?.headers ?? null),
          });
        }
        return out;
      }
      let bytes = 0;
      // iterate (not all()): rows stream from SQLite, so a batch of large values stays bounded
      for (const r of q.read.iterate(topic, partition, fromOffset, limit)) {
        if (out.length > 0 && bytes + r.value.byteLength > maxBytes) break;
        bytes += r.value.byteLength;
        out.push({
          topic,
          partition,
          offset: r.offset,
          key: r.key,
          value: new Uint8Array(r.value.buffer, r.value.byteOffset, r.value.byteLength),
          timestamp: r.timestamp,
          headers: parseHeaders(r.headers),
        });
      }
      return out;
    },
    readByPrefixes: (topic, partition, { fromOffset, high, limit, maxBytes = Infinity }, prefixes, keys) => {
      const query = q.byKeyFirst.get(topic);
      if (query === undefined || prefixes.some((p) => p === '' || prefixEnd(p) === undefined)) return undefined;
      // each prefix's first `limit` records by offset (SQLite sorts its range, holding no more than that): past the
      // last offset of a prefix that had more, the records of the others are not all known, so none is returned
      let known = high - 1;
      const found = new Map<number, string>(); // offset → key: prefixes may overlap
      for (const p of new Set(prefixes)) {
        const rows = query.all(p, prefixEnd(p)!, partition, fromOffset, high, limit);
        if (rows.length >= limit) known = Math.min(known, rows.at(-1)![0]);
        for (const [offset, key] of rows) if (keys(key)) found.set(offset, key);
      }
      const offsets = [...found.keys()].filter((o) => o <= known).sort((a, b) => a - b);
      const records: StoredRecord[] = [];
      let bytes = 0;
      for (const offset of offsets) {
        if (records.length >= limit) break;
        const v = q.value.get(topic, partition, offset)!;
        if (records.length > 0 && bytes + v.value.byteLength > maxBytes) break;
        bytes += v.value.byteLength;
        records.push({
          topic,
          partition,
          offset,
          key: found.get(offset)!,
          value: new Uint8Array(v.value.buffer, v.value.byteOffset, v.value.byteLength),
          timestamp: v.timestamp,
          headers: parseHeaders(v.headers),
        });
      }
      const whole = records.length === offsets.length;
      return { records, lastOffset: whole ? known : records.at(-1)!.offset };
    },
    rowstateOutline: (o = {}) => {
      ensureTopic(TOPICS.rowstate);
      // one read transaction: the ends and the keys are those of one state of the log
      return db.transaction((): RowstateOutline => {
        const ends = new Map<number, number>();
        for (const r of q.partitionEnds.all(TOPICS.rowstate)) ends.set(r.partition, r.next_offset);
        const versions: string[] = [];
        // a skip over the index, one seek per version (none per key): from a key with three separators or more to the
        // first past its version's range (prefixEnd of `version␟`: every key of the version sorts below it); from a key
        // with fewer, to the next key
        for (let key = o.versions === false ? undefined : q.firstKeyFrom.get(''); key !== undefined;) {
          const c = thirdSep(key);
          if (c < 0) {
            key = q.firstKeyAfter.get(key);
            continue;
          }
          const start = key.slice(0, c + 1); // the version and its separator
          const end = prefixEnd(start)!; // KEY_SEP is never the last code point
          // the range's first key may hold more separators (an id holding KEY_SEP): the version is there only if some
          // key of it splits exactly (the others are odd keys, decoded)
          if (!key.includes(KEY_SEP, c + 1) || q.exactIn.get(start, end, start) !== undefined)
            versions.push(key.slice(0, c));
          key = q.firstKeyFrom.get(end);
        }
        // the odd keys, and where their read may start: a snapshot key from its latest record (the earlier ones are
        // snapshots it supersedes), any other from its first
        const odd: string[] = [];
        const oddFrom = new Map<number, number>();
        for (const [key, partition, first, latest] of q.oddSpans.all()) {
          if (odd.at(-1) !== key) odd.push(key);
          const from = isSnapshotKey(key) ? latest : first;
          oddFrom.set(partition, Math.min(oddFrom.get(partition) ?? from, from));
        }
        return { ends, versions, odd, oddFrom };
      })();
    },
    readTexts: (topic, partition, fromOffset, limit, maxBytes = Infinity) => {
      const out: TextRecord[] = [];
      let chars = 0;
      for (const [offset, key, text] of q.readTexts.iterate(topic, partition, fromOffset, limit)) {
        if (out.length > 0 && chars + text.length > maxBytes) break;
        chars += text.length;
        out.push({ offset, key, text });
      }
      return out;
    },
    valueAt: (topic, partition, offset) => {
      const v = q.value.get(topic, partition, offset);
      return v ? new Uint8Array(v.value.buffer, v.value.byteOffset, v.value.byteLength) : NO_VALUE;
    },
    highWatermarks: (topics) => {
      const key = topics.join('\u0000');
      const keep = !db.inTransaction;
      const version = keep ? dataVersion.get()! : -1;
      const kept = keep ? keptWatermarks.get(key) : undefined;
      if (kept !== undefined && kept.version === version && kept.own === ownWrites) return kept.hw;
      const out = new Map<string, Map<number, number>>();
      for (const r of q.watermarks.all(JSON.stringify(topics))) {
        let m = out.get(r.topic);
        if (!m) out.set(r.topic, (m = new Map()));
        m.set(r.partition, r.next_offset);
      }
      if (keep) keptWatermarks.set(key, { version, own: ownWrites, hw: out });
      return out;
    },
  };
};
