import { afterEach, describe, expect, it } from 'vitest';
import { validateEvent } from '../../schemas/codec.ts';
import { EventTooLarge } from '../../schemas/errors.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS, keyOf } from '../../schemas/topics.ts';
import type { DeadLetter, EventBatch, EventConsumer, EventLog, LogEvent } from '../../processors/ports.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { trial, trials } from '../helpers/events.ts';

/** What one contract test gets: a fresh log (its own directory or topic namespace) it can reopen. */
export interface EventLogUnderTest {
  /** Opens the log under test; calling it again after `close()` opens the same log (a restart). */
  open(): Promise<EventLog>;
  /** The maximum event size the log was opened with. */
  readonly maxEventBytes: number;
  /** Partitions of each topic the log creates. */
  readonly partitions: number;
  /** Removes what `open` created (optional). */
  dispose?(): Promise<void>;
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), Math.max(ms, 0));
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e as Error)),
    );
  });

/** Reads a consumer's batches through one iterator; commits each batch unless told not to. */
const reader = (consumer: EventConsumer) => {
  const it = consumer.batches()[Symbol.asyncIterator]();
  const batches: EventBatch[] = [];
  const events: LogEvent[] = [];
  const take = async (opts: { until: () => boolean; commit?: boolean; timeoutMs?: number; what: string }) => {
    const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
    while (!opts.until()) {
      const r = await withTimeout(it.next(), deadline - Date.now(), opts.what);
      if (r.done) throw new Error(`consumer ended early: ${opts.what}`);
      batches.push(r.value);
      events.push(...r.value.events);
      if (opts.commit ?? true)
        await consumer.commit([
          { topic: r.value.topic, partition: r.value.partition, nextOffset: r.value.lastOffset + 1 },
        ]);
    }
  };
  return { batches, events, take };
};

const publishInChunks = async (log: EventLog, events: readonly PasskEvent[], chunk = 1_000) => {
  for (let i = 0; i < events.length; i += chunk) await log.publisher.publish(events.slice(i, i + chunk));
};

const ids = (events: readonly LogEvent[]) => events.map((e) => e.event.event_id);

export const eventLogContract = (name: string, setup: () => Promise<EventLogUnderTest>) =>
  describe(`EventLog contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });
    const openFresh = async () => {
      const sut = await setup();
      const logs: EventLog[] = [];
      cleanups.push(async () => {
        for (const l of logs) await l.close();
        await sut.dispose?.();
      });
      const open = async () => {
        const log = await sut.open();
        logs.push(log);
        return log;
      };
      return { sut, open };
    };

    it('reads back exactly the 10,000 events published, decoded, valid and in per-key order', async () => {
      const { open, sut } = await openFresh();
      const log = await open();
      const published = trials(10_000, { rows: 250 });
      await publishInChunks(log, published);

      const consumer = await log.consumer({ groupId: 'contract-10k', topics: [TOPICS.trials], maxBatch: 500 });
      const r = reader(consumer);
      await r.take({ until: () => r.events.length >= published.length, what: '10,000 events' });

      expect(r.events).toHaveLength(published.length);
      expect(new Set(ids(r.events)).size).toBe(published.length);
      expect(new Set(ids(r.events))).toEqual(new Set(published.map((e) => e.event_id)));
      for (const e of r.events) {
        expect(validateEvent(e.event)).toEqual(e.event);
        expect(e.topic).toBe(TOPICS.trials);
        expect(e.key).toBe(keyOf(e.event));
      }
      const byKey = (events: readonly PasskEvent[]) => {
        const m = new Map<string, string[]>();
        for (const e of events) m.set(keyOf(e), [...(m.get(keyOf(e)) ?? []), e.event_id]);
        return m;
      };
      expect(byKey(r.events.map((e) => e.event))).toEqual(byKey(published));
      // one key, one partition (the shared murmur2 partitioner); offsets increase within a partition
      const partitionOfKey = new Map<string, number>();
      const lastOffset = new Map<number, number>();
      for (const e of r.events) {
        expect(e.partition).toBe(partitionOf(e.key, sut.partitions));
        partitionOfKey.set(e.key, e.partition);
        expect(e.offset).toBeGreaterThan(lastOffset.get(e.partition) ?? -1);
        lastOffset.set(e.partition, e.offset);
      }
      expect(new Set(partitionOfKey.values()).size).toBeGreaterThan(1);
      expect((await consumer.lag()).filter((l) => l.topic === TOPICS.trials).reduce((s, l) => s + l.lag, 0)).toBe(0);
    });

    it('says caughtUp on the batch with which every partition it owns is read to its end, and on no batch before', async () => {
      const { open, sut } = await openFresh();
      const log = await open();
      const published = trials(2_000, { rows: 250 });
      await publishInChunks(log, published);
      const total = new Map<number, number>();
      for (const e of published) {
        const p = partitionOf(keyOf(e), sut.partitions);
        total.set(p, (total.get(p) ?? 0) + 1);
      }
      expect(total.size).toBe(sut.partitions);

      const consumer = await log.consumer({ groupId: 'contract-caught-up', topics: [TOPICS.trials], maxBatch: 300 });
      const r = reader(consumer);
      await r.take({ until: () => r.events.length >= published.length, what: '2,000 events' });
      const read = new Map<number, number>();
      const said = r.batches.map((b) => {
        read.set(b.partition, (read.get(b.partition) ?? 0) + b.events.length);
        const all = [...total].every(([p, n]) => read.get(p) === n);
        return { said: b.caughtUp === true, all };
      });
      expect(said.length).toBeGreaterThan(sut.partitions);
      expect(said.at(-1)).toEqual({ said: true, all: true });
      expect(said.filter((s) => s.said !== s.all)).toEqual([]);
    });

    it('keeps per-key order across overlapping publish calls (a later call lands after an earlier one)', async () => {
      const { open, sut } = await openFresh();
      const log = await open();
      // calls of very different sizes, all started at once: a short one is encoded (and on Kafka sent) long
      // before a long one is done; values large enough that one call's records for a partition need
      // several requests on Kafka (maxEventBytes per partition per request)
      const sizes = [700, 20, 400, 5, 300, 60, 250, 1];
      const filler = 'x'.repeat(Math.min(2_000, Math.floor(sut.maxEventBytes / 50)));
      const published = trials(
        sizes.reduce((a, b) => a + b, 0),
        { rows: 40 },
      ).map((t) => ({ ...t, output: `${t.output} ${filler}` }));
      const calls: TrialRecorded[][] = [];
      let at = 0;
      for (const n of sizes) calls.push(published.slice(at, (at += n)));
      await Promise.all(calls.map((c) => log.publisher.publish(c)));

      const consumer = await log.consumer({ groupId: 'contract-overlap', topics: [TOPICS.trials], maxBatch: 500 });
      const r = reader(consumer);
      await r.take({ until: () => r.events.length >= published.length, what: `${published.length} events` });
      expect(r.events).toHaveLength(published.length);
      const byKey = (events: readonly PasskEvent[]) => {
        const m = new Map<string, string[]>();
        for (const e of events) m.set(keyOf(e), [...(m.get(keyOf(e)) ?? []), e.event_id]);
        return m;
      };
      // published in call order, each call in its own order: per key, the log must hold the same sequence
      expect(byKey(r.events.map((e) => e.event))).toEqual(byKey(published));
      expect(new Set(r.events.map((e) => e.partition)).size).toBeGreaterThan(1);
    });

    it('honours committed offsets after a restart mid-stream', async () => {
      const { open } = await openFresh();
      const first = await open();
      const published = trials(1_200, { rows: 40 });
      await publishInChunks(first, published, 300);

      const c1 = await first.consumer({ groupId: 'contract-restart', topics: [TOPICS.trials], maxBatch: 100 });
      const r1 = reader(c1);
      await r1.take({ until: () => r1.events.length >= 400, what: 'first 400 events' });
      const committedIds = new Set(ids(r1.events));
      const beforeRestart = await c1.committed(TOPICS.trials);
      // one more batch read but never committed: the crash happened while it was being processed
      const committedBatches = r1.batches.length;
      await r1.take({ until: () => r1.batches.length > committedBatches, commit: false, what: 'uncommitted batch' });
      const uncommitted = r1.batches.at(-1)!;
      await first.close();

      const second = await open();
      const c2 = await second.consumer({ groupId: 'contract-restart', topics: [TOPICS.trials], maxBatch: 100 });
      expect(await c2.committed(TOPICS.trials)).toEqual(beforeRestart);
      const r2 = reader(c2);
      await r2.take({
        until: () => r2.events.length >= published.length - committedIds.size,
        what: 'the rest after restart',
      });

      expect(r2.events).toHaveLength(published.length - committedIds.size);
      for (const id of ids(r2.events)) expect(committedIds.has(id)).toBe(false);
      expect(new Set([...committedIds, ...ids(r2.events)])).toEqual(new Set(published.map((e) => e.event_id)));
      // each partition resumes exactly at its committed position
      const firstOffset = new Map<number, number>();
      for (const b of r2.batches)
        if (!firstOffset.has(b.partition)) firstOffset.set(b.partition, b.events[0]?.offset ?? b.lastOffset);
      for (const [partition, offset] of firstOffset) expect(offset).toBe(beforeRestart.get(partition) ?? 0);
      // the batch that was read but not committed is delivered again (at-least-once)
      const again = new Set(ids(r2.events));
      for (const e of uncommitted.events) expect(again.has(e.event.event_id)).toBe(true);
    });

    it('refuses an event over the maximum size at publish, with a clear error, and never truncates', async () => {
      const { open, sut } = await openFresh();
      const log = await open();
      const small = trial({ seq: 1, row_id: 'small' });
      const big = trial({ seq: 2, row_id: 'big', output: 'x'.repeat(sut.maxEventBytes + 1) });
      const error = await log.publisher.publish([small, big]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(EventTooLarge);
      const tooLarge = error as EventTooLarge;
      expect(tooLarge.size).toBeGreaterThan(sut.maxEventBytes);
      expect(tooLarge.max).toBe(sut.maxEventBytes);
      expect(tooLarge.retriable).toBe(false);
      expect(tooLarge.message).toMatch(/exceeds the maximum of \d+ bytes/);

      const near = trial({ seq: 3, row_id: 'near', output: 'y'.repeat(sut.maxEventBytes - 2_000) });
      await log.publisher.publish([near]);
      const consumer = await log.consumer({ groupId: 'contract-size', topics: [TOPICS.trials] });
      const r = reader(consumer);
      await r.take({ until: () => ids(r.events).includes(near.event_id), what: 'the near-maximum event' });
      expect(ids(r.events)).toEqual([near.event_id]); // nothing of the refused call was written
      const got = r.events[0]!.event as typeof near;
      expect(got.output).toHaveLength(near.output!.length);
      expect(got).toEqual(validateEvent(near));
    });

    it('delivers a duplicate append as written (de-duplication by event_id is the processors job)', async () => {
      const { open } = await openFresh();
      const log = await open();
      const e = trial({ seq: 7, row_id: 'dup' });
      await log.publisher.publish([e]);
      await log.publisher.publish([e]);
      const consumer = await log.consumer({ groupId: 'contract-dup', topics: [TOPICS.trials] });
      const r = reader(consumer);
      await r.take({ until: () => r.events.length >= 2, what: 'both copies' });
      expect(r.events.map((x) => x.event)).toEqual([validateEvent(e), validateEvent(e)]);
      expect(r.events[0]!.partition).toBe(r.events[1]!.partition);
      expect(r.events[1]!.offset).toBeGreaterThan(r.events[0]!.offset);
    });

    it('dead-letters malformed bytes with the original bytes and a reason, and goes on', async () => {
      const { open } = await openFresh();
      const log = await open();
      const key = keyOf(trial({ seq: 0, row_id: 'dlq' }));
      const before = trial({ seq: 10, row_id: 'dlq' });
      const after = trial({ seq: 11, row_id: 'dlq' });
      const garbage = new Uint8Array([0xff, 0xfe, 0x00, 0x01, 0x7b, 0x7d]);
      // a well-framed record (whatever the codec puts before the JSON) whose JSON fails the schema
      const valid = await log.codec.encode(before);
      const frame = valid.subarray(0, valid.length - JSON.stringify(validateEvent(before)).length);
      const invalidJson = new TextEncoder().encode(JSON.stringify({ ...before, attempt: -1, row_id: undefined }));
      const invalid = new Uint8Array([...frame, ...invalidJson]);

      await log.publisher.publish([before]);
      await log.publisher.publishRaw(TOPICS.trials, [
        { key, value: garbage },
        { key, value: invalid },
      ]);
      await log.publisher.publish([after]);

      const consumer = await log.consumer({ groupId: 'contract-dlq', topics: [TOPICS.trials] });
      const r = reader(consumer);
      await r.take({ until: () => ids(r.events).includes(after.event_id), what: 'the event after the bad records' });
      expect(ids(r.events)).toEqual([before.event_id, after.event_id]);
      const [b, a] = r.events;
      expect(a!.offset - b!.offset).toBe(3); // both bad records sit between them, and were skipped
      expect(r.batches.at(-1)!.lastOffset).toBe(a!.offset);

      const letters = await waitFor(
        () => log.deadLetters(),
        (l) => l.length >= 2,
        'two dead letters',
      );
      expect(letters).toHaveLength(2);
      const bySource = letters.sort((x, y) => x.source.offset - y.source.offset);
      expect(bySource.map((l) => l.source)).toEqual([
        { topic: TOPICS.trials, partition: b!.partition, offset: b!.offset + 1, key },
        { topic: TOPICS.trials, partition: b!.partition, offset: b!.offset + 2, key },
      ]);
      expect([...bySource[0]!.value]).toEqual([...garbage]);
      expect([...bySource[1]!.value]).toEqual([...invalid]);
      expect(bySource[0]!.reason.length).toBeGreaterThan(0);
      expect(bySource[1]!.reason).toMatch(/schema/);
      expect(bySource[1]!.reason).toMatch(/attempt|row_id/);
    });

    it('dead-letters a bad record once, however many groups read it and however often, and hands the letters to onDeadLetters', async () => {
      const { open } = await openFresh();
      let log = await open();
      const key = keyOf(trial({ seq: 0, row_id: 'dlq-once' }));
      const after = trial({ seq: 1, row_id: 'dlq-once' });
      // well framed (whatever the codec puts before the JSON), valid but for a lone surrogate in its row id
      const valid = await log.codec.encode(after);
      const frame = valid.subarray(0, valid.length - JSON.stringify(validateEvent(after)).length);
      const lone = JSON.stringify(trial({ seq: 2, row_id: '\ud800' }));
      const poison = [
        new Uint8Array([0xff, 0xfe, 0x00]),
        new Uint8Array([...frame, ...new TextEncoder().encode(lone)]),
      ];
      await log.publisher.publishRaw(
        TOPICS.trials,
        poison.map((value) => ({ key, value })),
      );
      await log.publisher.publish([after]);
      const handed: string[] = [];
      /** Reads to `after` in `groupId`; commits only when told (an uncommitted read is read again). */
      const readAll = async (groupId: string, commit: boolean) => {
        const consumer = await log.consumer({
          groupId,
          topics: [TOPICS.trials],
          onDeadLetters: async (letters) =>
            void handed.push(...letters.map((l) => `${groupId}:${l.source.partition}/${l.source.offset}`)),
        });
        const r = reader(consumer);
        await r.take({ until: () => ids(r.events).includes(after.event_id), commit, what: `${groupId} reads on` });
        await consumer.close();
      };
      await readAll('contract-dlq-a', false);
      await readAll('contract-dlq-a', true); // read again: it never committed
      await readAll('contract-dlq-b', true); // another group reads the same records
      await log.close();
      log = await open(); // a restart: what the DLQ holds is read from the log, not remembered
      await readAll('contract-dlq-c', true);
      const letters = await log.deadLetters();
      expect(letters.map((l) => l.source.offset).sort()).toEqual([0, 1]);
      expect(letters.map((l) => [...l.value])).toEqual(expect.arrayContaining(poison.map((p) => [...p])));
      expect(letters.find((l) => l.source.offset === 1)!.reason).toMatch(/row_id: holds a lone UTF-16 surrogate/);
      // every reader is told, each time it reads them (so a store fed from it stays complete across replays)
      expect(handed.filter((h) => h.startsWith('contract-dlq-a:'))).toHaveLength(4);
      expect(handed.filter((h) => h.startsWith('contract-dlq-b:'))).toHaveLength(2);
      expect(handed.filter((h) => h.startsWith('contract-dlq-c:'))).toHaveLength(2);
    });

    it('appends a letter without a log position once per id, and hands the topic to a reader of it alone', async () => {
      const { open } = await openFresh();
      let log = await open();
      const letter = (n: number, reason = 'no_convention: a plain HTTP span'): DeadLetter => ({
        source: { topic: 'otlp:/v1/traces', partition: -1, offset: -1, key: `trace-${n}/span-${n}` },
        value: new TextEncoder().encode(JSON.stringify({ resourceSpans: [{ n }] })),
        reason,
        id: `otlp:/v1/traces/letter-${n}`,
      });
      expect(await log.publisher.publishDeadLetters([letter(1), letter(2), letter(1)])).toBe(2);
      expect(await log.publisher.publishDeadLetters([letter(2), letter(3)])).toBe(1);
      await log.close();
      log = await open(); // a restart: what the DLQ holds is read from the log, not remembered
      expect(await log.publisher.publishDeadLetters([letter(3, 'late: again'), letter(4)])).toBe(1);
      const held = await log.deadLetters();
      expect(held.map((l) => l.id).sort()).toEqual([1, 2, 3, 4].map((n) => `otlp:/v1/traces/letter-${n}`));
      const three = held.find((l) => l.id === letter(3).id)!;
      expect({ ...three, value: [...three.value] }).toEqual({ ...letter(3), value: [...letter(3).value] });
      // a decode letter of the processors' sits in the same topic
      await log.publisher.publishRaw(TOPICS.trials, [{ key: 'k', value: new Uint8Array([0xff]) }]);
      const trials = reader(await log.consumer({ groupId: 'contract-dlq-decode', topics: [TOPICS.trials] }));
      await trials.take({ until: () => trials.batches.length > 0, what: 'the bad record read' });
      const follower = await log.consumer({ groupId: 'contract-dlq-follower', topics: [TOPICS.dlq] });
      const r = reader(follower);
      const letters = () => r.batches.flatMap((b) => b.letters ?? []);
      await r.take({ until: () => letters().length >= 5, what: 'the five letters' });
      expect(r.events).toEqual([]);
      expect(letters().filter((l) => l.id !== undefined)).toHaveLength(4);
      expect(letters().find((l) => l.id === undefined)?.source).toMatchObject({ topic: TOPICS.trials, offset: 0 });
    });

    it('starts a one-use reader where it is told, counting its lag and committed positions from there', async () => {
      const { sut, open } = await openFresh();
      const log = await open();
      const published = trials(400, { rows: 40 });
      await publishInChunks(log, published, 200);
      const probe = await log.consumer({ groupId: 'contract-start-probe', topics: [TOPICS.trials], transient: true });
      const high = new Map((await probe.lag()).map((l) => [l.partition, l.lag]));
      await probe.close();
      expect(high.size).toBe(sut.partitions);
      // partition 0 from offset 10, partition 1 from its end, the others from their first record
      const startAt = new Map([
        [0, 10],
        [1, high.get(1)!],
      ]);
      await expect(
        log.consumer({ groupId: 'contract-start-misuse', topics: [TOPICS.trials], startAt }),
      ).rejects.toThrow(/transient/);
      const c = await log.consumer({ groupId: 'contract-start-at', topics: [TOPICS.trials], transient: true, startAt });
      const committed = await c.committed(TOPICS.trials);
      expect(committed.get(0)).toBe(10);
      expect(committed.get(1)).toBe(high.get(1));
      const lag = new Map((await c.lag()).map((l) => [l.partition, l.lag]));
      expect(lag.get(0)).toBe(high.get(0)! - 10);
      expect(lag.get(1)).toBe(0);
      for (let p = 2; p < sut.partitions; p++) expect(lag.get(p)).toBe(high.get(p));
      const want = [...lag.values()].reduce((a, b) => a + b, 0);
      const r = reader(c);
      await r.take({ until: () => r.events.length >= want, commit: false, what: `${want} events from the starts` });
      expect(r.events).toHaveLength(want);
      const first = new Map<number, number>();
      for (const e of r.events) first.set(e.partition, Math.min(first.get(e.partition) ?? Infinity, e.offset));
      expect(first.get(0)).toBe(10);
      expect(first.has(1)).toBe(false);
      for (let p = 2; p < sut.partitions; p++) expect(first.get(p)).toBe(0);
      await c.close();
    });

    it('decodes only the records whose key `keys` accepts: the others are neither handed over nor dead-lettered', async () => {
      const { open } = await openFresh();
      const log = await open();
      const published = trials(300, { rows: 30 });
      await publishInChunks(log, published, 100);
      const wanted = new Set(['row-3', 'row-17'].map((row_id) => keyOf(trial({ seq: 0, row_id }))));
      // a record no reader could decode, under a key the reader refuses: skipped by its key, never read as an event
      await log.publisher.publishRaw(TOPICS.trials, [
        { key: keyOf(trial({ seq: 0, row_id: 'row-5' })), value: new Uint8Array([0xff, 0x00]) },
      ]);
      const keys = (key: string) => wanted.has(key);
      const c = await log.consumer({ groupId: 'contract-keys', topics: [TOPICS.trials], transient: true, keys });
      const high = new Map((await c.lag()).map((l) => [l.partition, l.lag]));
      const r = reader(c);
      const reached = () =>
        [...high].every(([p, h]) => h === 0 || r.batches.some((b) => b.partition === p && b.lastOffset + 1 >= h));
      await r.take({ until: reached, commit: false, what: 'every partition read to its end' });
      await c.close();
      const expected = published.filter((e) => wanted.has(keyOf(e))).map((e) => e.event_id);
      expect(ids(r.events).sort()).toEqual(expected.sort());
      expect(r.events.every((e) => wanted.has(e.key))).toBe(true);
      expect(await log.deadLetters()).toEqual([]);
    });

    it('splits the partitions between two members of one group, which together read everything', async () => {
      const { open } = await openFresh();
      const log = await open();
      const published = trials(2_000, { rows: 64 });
      await publishInChunks(log, published);
      const assigned = { a: new Set<string>(), b: new Set<string>() };
      const track = (set: Set<string>) => ({
        onAssigned: (tps: readonly { topic: string; partition: number }[]) =>
          tps.forEach((tp) => set.add(`${tp.partition}`)),
        onRevoked: (tps: readonly { topic: string; partition: number }[]) =>
          tps.forEach((tp) => set.delete(`${tp.partition}`)),
      });
      const a = await log.consumer({
        groupId: 'contract-group',
        topics: [TOPICS.trials],
        maxBatch: 50,
        ...track(assigned.a),
      });
      const b = await log.consumer({
        groupId: 'contract-group',
        topics: [TOPICS.trials],
        maxBatch: 50,
        ...track(assigned.b),
      });
      const ra = reader(a);
      const rb = reader(b);
      const seen = () => new Set([...ids(ra.events), ...ids(rb.events)]);
      const both = () => seen().size >= published.length && assigned.a.size > 0 && assigned.b.size > 0;
      // pump both members at once, as two processes would
      const pump = async (r: ReturnType<typeof reader>) => {
        try {
          await r.take({ until: both, what: 'two members reading everything' });
        } catch (e) {
          if (!both()) throw e;
        }
      };
      await Promise.race([
        Promise.all([pump(ra), pump(rb)]),
        waitFor(
          async () => both(),
          (x) => x,
          'both members done',
          90_000,
        ),
      ]);
      expect(seen()).toEqual(new Set(published.map((e) => e.event_id)));
      expect(assigned.a.size).toBeGreaterThan(0);
      expect(assigned.b.size).toBeGreaterThan(0);
      for (const p of assigned.a) expect(assigned.b.has(p)).toBe(false);
      await a.close();
      await b.close();
    });
  });

const waitFor = async <T>(
  get: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};
