import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { byKeyQuery, KEY_INDEXED_TOPICS, KEY_INDEXES } from '../../log/embedded/store.ts';
import type { EventLog } from '../../processors/ports.ts';
import { KEY_SEP, TOPICS, type Topic } from '../../schemas/topics.ts';
import { outlineOfKeys } from '../../processors/operators/decideGates.ts';
import { base } from '../helpers/poison.ts';

const utf8 = new TextEncoder();

/** Keys and prefixes over a small alphabet, so they share prefixes: the separator, a 2- and a 4-byte code point. */
const piece = fc.constantFrom('a', 'b', KEY_SEP, 'é', '\u{1F600}', '\u{FFFF}');
const keyArb = fc.array(piece, { maxLength: 4 }).map((p) => p.join(''));
const prefixArb = fc.array(piece, { minLength: 1, maxLength: 3 }).map((p) => p.join(''));

/** A valid event per record, told apart by its row id (its place in the written list). */
const valueOf = (i: number) => utf8.encode(JSON.stringify({ ...base, row_id: `r${i}` }));

/**
 * Every event the consumer hands over of `topic`, read from 0 to its end with `keys` (and, when given, `keyPrefixes`),
 * per partition in the order handed over: [offset, key, row id].
 */
const readAll = async (
  log: EventLog,
  topic: Topic,
  groupId: string,
  o: { keys: (key: string) => boolean; keyPrefixes?: readonly string[]; maxBatch: number },
): Promise<Map<number, [number, string, string][]>> => {
  const consumer = await log.consumer({
    groupId,
    topics: [topic],
    transient: true,
    maxBatch: o.maxBatch,
    keys: o.keys,
    ...(o.keyPrefixes && { keyPrefixes: o.keyPrefixes }),
  });
  const got = new Map<number, [number, string, string][]>();
  try {
    // from 0: the lag is the end
    const ends = new Map((await consumer.lag()).filter((l) => l.lag > 0).map((l) => [l.partition, l.lag]));
    if (ends.size === 0) return got;
    for await (const b of consumer.batches()) {
      const list = got.get(b.partition) ?? [];
      got.set(b.partition, list);
      for (const e of b.events) list.push([e.offset, e.key, (e.event as { row_id: string }).row_id]);
      if (b.lastOffset + 1 >= ends.get(b.partition)!) ends.delete(b.partition);
      if (ends.size === 0) break;
    }
    for (const [p, list] of got) if (list.length === 0) got.delete(p);
    return got;
  } finally {
    await consumer.close();
  }
};

const withLog = async <T>(partitions: number, body: (log: EventLog, dataDir: string) => Promise<T>): Promise<T> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-keyindex-'));
  const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL', partitions });
  try {
    return await body(log, dataDir);
  } finally {
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

/** What SQLite says it does for one indexed topic's read by key (EXPLAIN QUERY PLAN of the store's own query). */
const planOf = (dataDir: string, topic: string): string => {
  const db = new Database(join(dataDir, 'log.sqlite'), { readonly: true });
  try {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${byKeyQuery(topic)}`).all('a', 'b', 0, 0, 10) as { detail: string }[];
    return rows.map((r) => r.detail).join('; ');
  } finally {
    db.close();
  }
};

/** A range of the topic's index by key (offsets and keys from the index alone): no scan of the partition. */
const byIndex = (topic: string) => `USING COVERING INDEX ${KEY_INDEXES[topic]} (key>? AND key<?)`;

/** The log's indexes by key, as its file holds them. */
const keyIndexesIn = (dataDir: string): string[] => {
  const db = new Database(join(dataDir, 'log.sqlite'), { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[])
      .map((r) => r.name)
      .filter((n) => Object.values(KEY_INDEXES).includes(n))
      .sort();
  } finally {
    db.close();
  }
};

const written = fc.record({
  keys: fc.array(keyArb, { minLength: 1, maxLength: 40 }),
  prefixes: fc.array(prefixArb, { minLength: 1, maxLength: 3 }),
  // a filter narrower than the prefixes (the contract: every key `keys` accepts starts with one of them)
  dropEndingB: fc.boolean(),
  partitions: fc.integer({ min: 1, max: 4 }),
  maxBatch: fc.integer({ min: 1, max: 6 }),
  topic: fc.constantFrom(...(KEY_INDEXED_TOPICS as Topic[])),
});

type Written = typeof written extends fc.Arbitrary<infer T> ? T : never;

/** The keys filter and the read through the index, against the scan: the same records, in the same order. */
const sameAsScan = async (log: EventLog, w: Written, group: string) => {
  const keys = (key: string) => w.prefixes.some((p) => key.startsWith(p)) && !(w.dropEndingB && key.endsWith('b'));
  const scanned = await readAll(log, w.topic, `${group}-scan`, { keys, maxBatch: w.maxBatch });
  const indexed = await readAll(log, w.topic, `${group}-index`, {
    keys,
    keyPrefixes: w.prefixes,
    maxBatch: w.maxBatch,
  });
  expect(indexed).toEqual(scanned);
  const expectedCount = w.keys.filter(keys).length;
  expect([...indexed.values()].reduce((n, l) => n + l.length, 0)).toBe(expectedCount);
};

describe('the embedded log read by key through its index', () => {
  it('reads exactly the records a scan with the same keys filter reads, in the same order', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(written, async (w) =>
        withLog(w.partitions, async (log, dataDir) => {
          await log.publisher.publishRaw(
            w.topic,
            w.keys.map((key, i) => ({ key, value: valueOf(i) })),
          );
          expect(planOf(dataDir, w.topic)).toContain(byIndex(w.topic));
          await sameAsScan(log, w, `g${++run}`);
        }),
      ),
      { numRuns: 40 },
    );
  });

  it('builds the index on the first open of a log written before it, and then reads by it what a scan reads', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(written, async (w) => {
        const dataDir = mkdtempSync(join(tmpdir(), 'passk-keyindex-old-'));
        try {
          // a log as a passk before the index left it: records written, the same schema without the two indexes
          const half = Math.ceil(w.keys.length / 2);
          const old = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL', partitions: w.partitions });
          await old.publisher.publishRaw(
            w.topic,
            w.keys.slice(0, half).map((key, i) => ({ key, value: valueOf(i) })),
          );
          await old.close();
          const raw = new Database(join(dataDir, 'log.sqlite'));
          for (const name of Object.values(KEY_INDEXES)) raw.exec(`DROP INDEX ${name}`);
          raw.close();
          expect(keyIndexesIn(dataDir)).toEqual([]);
          // the migration: this open builds the indexes over what the old log holds; the rest is appended after
          const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL', partitions: w.partitions });
          try {
            await log.publisher.publishRaw(
              w.topic,
              w.keys.slice(half).map((key, i) => ({ key, value: valueOf(half + i) })),
            );
            expect(keyIndexesIn(dataDir)).toEqual(Object.values(KEY_INDEXES).sort());
            expect(planOf(dataDir, w.topic)).toContain(byIndex(w.topic));
            await sameAsScan(log, w, `m${++run}`);
          } finally {
            await log.close();
          }
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      }),
      { numRuns: 20 },
    );
  });
  it('says on stderr, before it builds them, that an open of an old log builds its indexes by key, once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-keyindex-notice-'));
    const notices = (lines: unknown[][]) =>
      lines.map(([l]) => String(l)).filter((l) => l.includes('building its indexes by key'));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const fresh = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL' });
      await fresh.publisher.publishRaw(
        TOPICS.trials,
        Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: valueOf(i) })),
      );
      await fresh.close();
      expect(notices(stderr.mock.calls)).toEqual([]);
      const raw = new Database(join(dataDir, 'log.sqlite'));
      for (const name of Object.values(KEY_INDEXES)) raw.exec(`DROP INDEX ${name}`);
      raw.close();
      await createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL' }).close();
      const said = notices(stderr.mock.calls);
      expect(said).toHaveLength(1);
      expect(said[0]).toContain('a scan of all 30 records');
      expect(said[0]).toContain(join(dataDir, 'log.sqlite'));
      expect(keyIndexesIn(dataDir)).toEqual(Object.values(KEY_INDEXES).sort());
      await createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL' }).close();
      expect(notices(stderr.mock.calls)).toHaveLength(1);
    } finally {
      stderr.mockRestore();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * Keys of passk.rowstate as passk writes them and as ids holding KEY_SEP make them: parts joined by the separator (0 to
 * 6 of them, so fewer, exactly and more than a row state's three), snapshot keys among them, parts sharing prefixes.
 */
const part = fc.constantFrom(
  'a',
  'b',
  'ab',
  '',
  'é',
  '\u{1F600}',
  '\u{FFFF}',
  'gatebook',
  'windows',
  '0',
  `a${KEY_SEP}`,
);
const rowstateKey = fc.array(part, { minLength: 1, maxLength: 7 }).map((p) => p.join(KEY_SEP));

describe("the outline of passk.rowstate's keys (the gates' restore by key)", () => {
  it('names every version and every other key a walk of every key names, and the ends of the same read', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowstateKey, { minLength: 0, maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        async (keys, partitions, dropOdd) =>
          withLog(partitions, async (first, dataDir) => {
            let log = first;
            const half = Math.ceil(keys.length / 2);
            await log.publisher.publishRaw(
              TOPICS.rowstate,
              keys.slice(0, half).map((key, i) => ({ key, value: valueOf(i) })),
            );
            if (dropOdd) {
              // a log written before the index of the other keys: the next open builds it over what the log holds
              await log.close();
              const raw = new Database(join(dataDir, 'log.sqlite'));
              raw.exec('DROP INDEX records_rowstate_odd');
              raw.close();
              log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL', partitions });
            }
            try {
              await log.publisher.publishRaw(
                TOPICS.rowstate,
                keys.slice(half).map((key, i) => ({ key, value: valueOf(half + i) })),
              );
              const outline = await log.rowstateOutline!();
              const expected = outlineOfKeys(keys);
              expect([...outline.versions].sort()).toEqual(expected.versions.sort());
              expect([...outline.odd].sort()).toEqual(expected.odd.sort());
              // each version and key once
              expect(new Set(outline.versions).size).toBe(outline.versions.length);
              expect(new Set(outline.odd).size).toBe(outline.odd.length);
              // the ends: every partition, past its last record
              expect(outline.ends.size).toBe(partitions);
              expect([...outline.ends.values()].reduce((a, b) => a + b, 0)).toBe(keys.length);
              // without its versions (the gates' restore): the same ends and other keys, no version
              const bare = await log.rowstateOutline!({ versions: false });
              expect(bare.versions).toEqual([]);
              expect([...bare.odd].sort()).toEqual(expected.odd.sort());
              expect(bare.ends).toEqual(outline.ends);
            } finally {
              if (log !== first) await log.close();
            }
          }),
      ),
      { numRuns: 60 },
    );
  });
});
