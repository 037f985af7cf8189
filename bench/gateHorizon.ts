import {
  chunkSnapshot,
  emptyPrefix,
  emptyShelf,
  foldPrefix,
  heldIds,
  restorePrefix,
  shelve,
  toGateBookSnapshot,
  type DecisionsPrefix,
} from '../processors/folds/gateSnapshot.ts';
import type { DecisionEvent } from '../processors/folds/gates.ts';
import { jsonCodec } from '../schemas/codec.ts';
import type { RunClosed } from '../schemas/events/comparisons.ts';
import type { GateBookSnapshot } from '../schemas/events/gateBookSnapshot.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { asyncBestMs, comparisonAt, envelopeAt, pairedMs, retainedOf, type Paired } from './gateBook.ts';

/**
 * Issue 26, item 6: a restore under the gates' horizon. The stream is dated: 1,000 decision events a day (one
 * comparison declared, a confirmation, its verdict, 100 redeliveries of earlier verdicts, 897 runs closed, each a
 * new run), so 1M events are 1,000 days and 1,000 decided comparisons; the horizon is one day
 * (`PASSK_GATE_HORIZON_DAYS=1`), so it holds as many events as the 1,000-event baseline. Restore (decode the
 * snapshot, `restorePrefix`, fold the records after it) and retained memory after 1M events, against the same after
 * the first 1,000 events, in the same run.
 */
const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const PER_DAY = 1_000;
const timeOf = (i: number) => T0 + Math.floor((i * DAY) / PER_DAY);

const comparisons: ReturnType<typeof comparisonAt>[] = [];
/** The k-th day's comparison (built once: a verdict carries 50 evidence rows). */
const comparisonOf = (k: number) => {
  while (comparisons.length <= k)
    comparisons.push(comparisonAt(comparisons.length, timeOf(comparisons.length * PER_DAY)));
  return comparisons[k]!;
};

const closedRun = (i: number): RunClosed => ({
  ...envelopeAt('RunClosed', timeOf(i), 'run', i),
  run_id: `run-${i}`,
  suite: 's',
  dataset_version: `d${Math.floor(i / PER_DAY)}`,
  agent_version: `v${i % 50}`,
  status: 'completed',
  trials: 300,
  source_event_id: deterministicEventId(timeOf(i), 'RunFinished', i),
});

/** The i-th record of the stream. */
const eventAt = (i: number): DecisionEvent => {
  const slot = i % PER_DAY;
  const k = Math.floor(i / PER_DAY);
  if (slot < 3) return comparisonOf(k)[slot]!;
  if (slot < 103) return comparisonOf(i % (k + 1))[2]; // an earlier verdict delivered again
  return closedRun(i);
};

/** Records `from` ≤ offset < `to`, in batches of 1,000 as the consumer hands them (built before any timing). */
const batchesOf = (from: number, to: number) => {
  const out: { offset: number; event: DecisionEvent }[][] = [];
  for (let start = from; start < to; start += 1_000) {
    const batch: { offset: number; event: DecisionEvent }[] = [];
    for (let i = start; i < Math.min(to, start + 1_000); i++) batch.push({ offset: i, event: eventAt(i) });
    out.push(batch);
  }
  return out;
};

const foldAll = (s: DecisionsPrefix, batches: ReturnType<typeof batchesOf>): DecisionsPrefix => {
  for (const batch of batches) foldPrefix(s, batch, batch.at(-1)!.offset);
  return s;
};

export interface GateHorizonLine {
  readonly events: number;
  readonly comparisons: number;
  readonly horizonDays: number;
  /** Records after the snapshot a restore folds (0: a clean stop). */
  readonly tail: number;
  readonly snapshotBytes: number;
  readonly baselineSnapshotBytes: number;
  readonly restoreMs: number;
  readonly baselineRestoreMs: number;
  /** Both timed in alternating rounds: the medians and the spread of the rounds' ratios. */
  readonly paired: Paired;
  readonly bytes: number;
  readonly baselineBytes: number;
  readonly held: number;
  readonly baselineHeld: number;
}

export async function benchGateHorizon(o: {
  events: number;
  tails: readonly number[];
  horizonDays?: number;
}): Promise<GateHorizonLine[]> {
  const horizonDays = o.horizonDays ?? 1;
  const h = horizonDays * DAY;
  const snapshotAfter = async (events: number) => {
    const prefix = emptyPrefix(h);
    for (let from = 0; from < events; from += 100_000)
      foldAll(prefix, batchesOf(from, Math.min(events, from + 100_000)));
    return jsonCodec.encode(toGateBookSnapshot(prefix, 0, 1, 'bench'));
  };
  const restore = async (bytes: Uint8Array, tail: ReturnType<typeof batchesOf>): Promise<DecisionsPrefix> => {
    const snapshot = await jsonCodec.decode(bytes);
    if (snapshot.type !== 'GateBookSnapshot') throw new Error(snapshot.type);
    return foldAll(restorePrefix(snapshot, h), tail);
  };
  const memory = (s: DecisionsPrefix, copies: number) => {
    const json = JSON.stringify(toGateBookSnapshot(s, 0, 1, 'bench'));
    return retainedOf(() => restorePrefix(JSON.parse(json) as GateBookSnapshot, h), copies);
  };
  const base = await snapshotAfter(1_000);
  const baseRestored = await restore(base, []);
  const baselineBytes = memory(baseRestored, 50);
  const bytes = await snapshotAfter(o.events);
  const out: GateHorizonLine[] = [];
  for (const tail of o.tails) {
    const records = batchesOf(o.events, o.events + tail);
    // timed in rounds alternating with the 1,000-event restore (`pairedMs`; until 2026-12-07 best of 5 rounds against
    // a baseline timed once before)
    const paired = await pairedMs(
      () => restore(bytes, records),
      () => restore(base, []),
    );
    const restored = await restore(bytes, records);
    out.push({
      events: o.events,
      comparisons: Math.ceil(o.events / PER_DAY),
      horizonDays,
      tail,
      snapshotBytes: bytes.byteLength,
      baselineSnapshotBytes: base.byteLength,
      restoreMs: paired.ms,
      baselineRestoreMs: paired.baselineMs,
      paired,
      bytes: memory(restored, 20),
      baselineBytes,
      held: heldIds(restored),
      baselineHeld: heldIds(baseRestored),
    });
  }
  return out;
}

export interface GateChunksLine {
  readonly events: number;
  readonly closedRuns: number;
  readonly snapshotBytes: number;
  readonly chunks: number;
  /** Decode every chunk, join them (`shelve`), `restorePrefix`. */
  readonly chunkedMs: number;
  /** The same snapshot as one record (were the log to take it): decode, `restorePrefix`. */
  readonly wholeMs: number;
  /**
   * What the code before did for such a partition (its snapshot not written): decode and fold every record from
   * offset 0 (the log's read not counted).
   */
  readonly replayMs: number;
}

/**
 * Chunked snapshots (issue 26, item 6): the stream above with no horizon (the default) folded into one partition
 * until its snapshot is several times `maxEventBytes` (1 MB), written as chunks, then restored from them; against
 * the same snapshot decoded as one record, and against the replay from offset 0 the partition fell back to before
 * (each record decoded as the consumer does; the log's read is not counted, so the replay is the cheaper side).
 */
export async function benchGateChunks(o: { events: number; maxBytes?: number }): Promise<GateChunksLine> {
  const maxBytes = o.maxBytes ?? 1_000_000;
  const batches = batchesOf(0, o.events);
  const prefix = foldAll(emptyPrefix(0), batches);
  const whole = toGateBookSnapshot(prefix, 0, 1, 'bench');
  const chunks = await Promise.all(chunkSnapshot(whole, maxBytes, 'a').map((c) => jsonCodec.encode(c)));
  const one = await jsonCodec.encode(whole);
  const fromChunks = async () => {
    const shelf = emptyShelf();
    for (const bytes of chunks) {
      const e = await jsonCodec.decode(bytes);
      if (e.type !== 'GateBookSnapshot') throw new Error(e.type);
      shelve(shelf, e);
    }
    return restorePrefix(shelf.latest.get(0), 0);
  };
  const fromOne = async () => {
    const e = await jsonCodec.decode(one);
    if (e.type !== 'GateBookSnapshot') throw new Error(e.type);
    return restorePrefix(e, 0);
  };
  // the replay decodes each record as the log's consumer does (the read itself is still not counted)
  const encoded = await Promise.all(
    batches.map((b) => Promise.all(b.map(async (r) => ({ offset: r.offset, bytes: await jsonCodec.encode(r.event) })))),
  );
  const replay = async () => {
    const s = emptyPrefix(0);
    for (const b of encoded) {
      const batch = await Promise.all(
        b.map(async (r) => ({ offset: r.offset, event: await jsonCodec.decode(r.bytes) })),
      );
      foldPrefix(s, batch, batch.at(-1)!.offset);
    }
    return s;
  };
  if ((await fromChunks()).closed.size !== prefix.closed.size) throw new Error('chunks lost closed runs');
  await fromOne();
  await replay();
  return {
    events: o.events,
    closedRuns: prefix.closed.size,
    snapshotBytes: one.byteLength,
    chunks: chunks.length,
    chunkedMs: await asyncBestMs(fromChunks, 3),
    wholeMs: await asyncBestMs(fromOne, 3),
    replayMs: await asyncBestMs(replay, 1),
  };
}
