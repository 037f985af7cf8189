import { map, type OperatorFunction } from 'rxjs';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import {
  conflictReason,
  retractionRowKey,
  toRowStateChanged,
  type RowFoldOptions,
  type StreamRowState,
} from '../folds/rowState.ts';
import { foldTrialsInto, type FoldOutcome, type OwnedRowChange, type RowEvent } from '../folds/rowTable.ts';
import { applyRowChanges, copySummary, versionKeyOf, type VersionSnapshot } from '../folds/versionSummary.ts';
import { pushAll } from '../core/arrays.ts';
import type { DeadLetter, EventBatch, LogEvent } from '../ports.ts';
import type { RowStore } from './rowStore.ts';

export interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: number;
}

/** A durable unit after the fold: what must become durable before its positions are committed. */
export interface FoldedUnit {
  /** The furthest position per partition. */
  readonly positions: readonly Position[];
  /** In-flight records this unit holds (released when committed). */
  readonly weight: number;
  /** One changelog record per row the unit changed, its state as the unit left it, in first-change order. */
  readonly changelog: readonly RowStateChanged[];
  /**
   * The row state of each changelog record, as `changelog` orders them: the table's own row, frozen when the unit was
   * folded (the next unit's fold copies it before changing it), so the gates of this process hold it as it is instead
   * of converting the record again (`RowstateFeed.push`), and the record shares its attempts.
   */
  readonly states: readonly StreamRowState[];
  /** The trials the unit folded (a duplicate or a conflict is not one of them): what the store's `trials` gets. */
  readonly trials: readonly TrialRecorded[];
  /**
   * Trials that answer a slot already answered otherwise (`slotConflict`): never folded, dead-lettered with the
   * event as JSON and a reason naming both event ids, before the unit is committed.
   */
  readonly conflicts: readonly DeadLetter[];
  readonly finished: readonly RunFinished[];
  /** Retractions (one per row of a retracted run), folded in the log's order with the trials. */
  readonly retracted: readonly RunRetracted[];
  /** The summary of each (partition, version) the unit changed, copied as of the unit's position in that partition. */
  readonly summaries: readonly VersionSnapshot[];
  /**
   * The store's repair after a restart (empty otherwise): for redelivered records the restored rows already hold
   * (their changelog was published, their store write may have failed), those rows' states and those trials, to
   * write to the store again (every table collapses a row written twice), with no changelog. Their versions'
   * summaries are in `summaries`.
   */
  readonly repaired: { readonly trials: readonly TrialRecorded[]; readonly rowStates: readonly RowStateChanged[] };
  /** Valid events of another type on the trials topic: counted, not folded. */
  readonly skipped: number;
  /** The latest lag per partition. */
  readonly lag: readonly { topic: string; partition: number; lag: number }[];
}

const utf8 = new TextEncoder();

/** The dead letter of a conflicting trial: its position, the event as JSON, and why. */
const conflictLetter = (e: LogEvent, reason: string): DeadLetter => ({
  source: { topic: e.topic, partition: e.partition, offset: e.offset, key: e.key },
  value: utf8.encode(JSON.stringify(e.event)),
  reason,
});

/**
 * A (row, run) slot in `RepairState.pending` whose retraction the window has met: a trial of that run met later is
 * one a straight run never stored, and a copy of the retraction met later writes nothing.
 */
const CLOSED: TrialRecorded[] = []; // never pushed to: told by identity

/**
 * What a batch folded in a partition's repair window gives the store's repair: a trial the row already holds is
 * written again, with its row; a retraction the row already carries rewrites its row, and the trials of that run
 * met before its first copy in the window, the first per attempt (a straight run stored them before the
 * retraction; one met after it, it never did). Once a retraction is met in the window, held or folded anew, its
 * (row, run) slot is closed: a later copy of it (an at-least-once duplicate) writes no trial.
 */
const repairOf = (
  store: RowStore,
  partition: number,
  until: number,
  table: ReturnType<RowStore['table']>,
  events: readonly LogEvent[],
  repeated: readonly { index: number; key: string }[],
  trials: TrialRecorded[],
  rows: Map<number, Set<string>>,
): void => {
  const { seen, pending } = store.repairState(partition);
  let next = 0; // `repeated` is in the events' order
  for (let index = 0; index < events.length; index++) {
    const e = events[index]!;
    const isRepeated = repeated[next]?.index === index;
    const key = isRepeated ? repeated[next++]!.key : '';
    if (e.offset >= until) continue;
    const event = e.event as RowEvent;
    if (!isRepeated) {
      // a retraction the restored row did not carry, folded now: its run's trials met later were never stored (none
      // of that run met before it is held back: the row did not carry the retraction then, so they were folded)
      if (event.type === 'RunRetracted') pending.set(`${retractionRowKey(event)}\u0000${event.run_id}`, CLOSED);
      continue;
    }
    let keys = rows.get(partition);
    if (keys === undefined) rows.set(partition, (keys = new Set()));
    if (event.type === 'RunRetracted') {
      keys.add(key);
      const slot = `${key}\u0000${event.run_id}`;
      const before = pending.get(slot);
      if (before === CLOSED) continue;
      if (before !== undefined) pushAll(trials, before);
      pending.set(slot, CLOSED);
    } else if (table.get(key)?.retracted_runs?.includes(event.run_id)) {
      const slot = `${key}\u0000${event.run_id}`;
      const before = pending.get(slot);
      // met after the retraction in the window: a straight run never stored it
      if (before === CLOSED) continue;
      // one per attempt, the first: the one a straight run folded (a later one in its slot was a copy or a conflict)
      if (before === undefined) pending.set(slot, [event]);
      else if (!before.some((b) => b.attempt === event.attempt)) before.push(event);
    } else if (!seen.has(event.event_id)) {
      // once per trial id in the window (a copy of one folded in this run is written again: harmless, the table
      // collapses it, and `seen` then holds only what the changelog was ahead by, not a long backlog's every id)
      seen.add(event.event_id);
      trials.push(event);
      keys.add(key);
    }
  }
};

/** The in-flight weight of a batch: its events, at least 1 (a batch of dead letters still holds a position). */
export const weightOf = (b: EventBatch): number => Math.max(1, b.events.length);

/**
 * Folds a durable unit's batches, in order, each into its partition's row table, in one pass: rows are
 * changed in place (`foldTrialsInto`) and marked; once the unit's batches are folded, each changed row's
 * changelog record is built straight from the table's row (its attempts copied), one per row per unit
 * (Kafka Streams' record cache), and each partition's version summaries are updated once per changed row
 * and snapshotted. Nothing is copied per batch, so a row's state is read only after its unit's last
 * batch, and the unit's records are built before anything else is folded (all of this is one call).
 */
export const foldUnits = (
  store: RowStore,
  producer: string,
  opts: RowFoldOptions = {},
): OperatorFunction<readonly EventBatch[], FoldedUnit> =>
  map((batches) => {
    const trials: TrialRecorded[] = [];
    const finished: RunFinished[] = [];
    const retracted: RunRetracted[] = [];
    let skipped = 0;
    let weight = 0;
    // every batch of a unit is on one topic, so a partition names its position and its lag
    const positions = new Map<number, Position>();
    const lag = new Map<number, FoldedUnit['lag'][number]>();
    const changed = new Map<number, Map<string, OwnedRowChange>>();
    const conflicts: DeadLetter[] = [];
    const batchTrials: RowEvent[] = [];
    const batchEvents: LogEvent[] = [];
    const outcome: FoldOutcome = { folded: trials, conflicts: [] };
    const repeated: { index: number; key: string }[] = [];
    const repairOutcome: FoldOutcome = { folded: trials, conflicts: outcome.conflicts, repeated };
    const repairedTrials: TrialRecorded[] = [];
    const repairedRows = new Map<number, Set<string>>();
    for (const batch of batches) {
      batchTrials.length = 0;
      batchEvents.length = 0;
      for (const e of batch.events) {
        const event = e.event;
        if (event.type === 'TrialRecorded') {
          batchTrials.push(event);
          batchEvents.push(e);
        } else if (event.type === 'RunRetracted') {
          batchTrials.push(event);
          batchEvents.push(e);
          retracted.push(event);
        } else if (event.type === 'RunFinished') finished.push(event);
        else skipped++;
      }
      let rows = changed.get(batch.partition);
      if (rows === undefined) changed.set(batch.partition, (rows = new Map()));
      // the store's repair: only below the partition's end as it was at the restore (usually never)
      const until = store.repairUntil(batch.partition);
      const table = store.table(batch.partition);
      if (until === 0) foldTrialsInto(table, batchTrials, rows, opts, outcome);
      else {
        foldTrialsInto(table, batchTrials, rows, opts, repairOutcome);
        repairOf(store, batch.partition, until, table, batchEvents, repeated, repairedTrials, repairedRows);
        repeated.length = 0;
        if (batch.lastOffset + 1 >= until) store.setRepairUntil(batch.partition, 0);
      }
      for (const c of outcome.conflicts)
        conflicts.push(conflictLetter(batchEvents[c.index]!, conflictReason(c.trial, c.conflict)));
      outcome.conflicts.length = 0;
      weight += weightOf(batch);
      const nextOffset = batch.lastOffset + 1;
      if ((positions.get(batch.partition)?.nextOffset ?? -1) < nextOffset)
        positions.set(batch.partition, { topic: batch.topic, partition: batch.partition, nextOffset });
      lag.set(batch.partition, {
        topic: batch.topic,
        partition: batch.partition,
        lag: Math.max(0, batch.highWatermark - nextOffset),
      });
    }
    const changelog: RowStateChanged[] = [];
    const states: StreamRowState[] = [];
    const summaries: VersionSnapshot[] = [];
    for (const [partition, rows] of changed) {
      if (rows.size === 0) continue;
      const sums = store.summaries(partition);
      const versions = applyRowChanges(sums, rows.values());
      const nextOffset = positions.get(partition)!.nextOffset;
      for (const key of versions) summaries.push({ partition, nextOffset, summary: copySummary(sums.get(key)!) });
      for (const c of rows.values()) {
        // frozen: the record shares its attempts, and the gates the row (a later change is made to a copy)
        const row = Object.freeze(c.after);
        changelog.push(toRowStateChanged(row, producer, c.key));
        states.push(row);
      }
    }
    const repairedStates: RowStateChanged[] = [];
    for (const [partition, keys] of repairedRows) {
      const rows = changed.get(partition);
      const table = store.table(partition);
      const sums = store.summaries(partition);
      const nextOffset = positions.get(partition)!.nextOffset;
      const snapshotted = new Set<string>();
      for (const s of summaries) if (s.partition === partition) snapshotted.add(versionKeyOf(s.summary));
      for (const key of keys) {
        const row = table.get(key);
        if (row === undefined || rows?.has(key)) continue; // a changed row is in the changelog, so written anyway
        repairedStates.push(toRowStateChanged(row, producer, key));
        const version = versionKeyOf(row);
        const summary = sums.get(version);
        if (summary === undefined || snapshotted.has(version)) continue;
        snapshotted.add(version);
        summaries.push({ partition, nextOffset, summary: copySummary(summary) });
      }
    }
    return {
      positions: [...positions.values()],
      weight,
      changelog,
      states,
      trials,
      conflicts,
      finished,
      retracted,
      summaries,
      repaired: { trials: repairedTrials, rowStates: repairedStates },
      skipped,
      lag: [...lag.values()],
    };
  });
