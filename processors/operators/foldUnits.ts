import { map, type OperatorFunction } from 'rxjs';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { conflictReason, toRowStateChanged, type RowFoldOptions } from '../folds/rowState.ts';
import { foldTrialsInto, type FoldOutcome, type OwnedRowChange, type RowEvent } from '../folds/rowTable.ts';
import { applyRowChanges, copySummary, type VersionSnapshot } from '../folds/versionSummary.ts';
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
      foldTrialsInto(store.table(batch.partition), batchTrials, rows, opts, outcome);
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
    const summaries: VersionSnapshot[] = [];
    for (const [partition, rows] of changed) {
      if (rows.size === 0) continue;
      const sums = store.summaries(partition);
      const versions = applyRowChanges(sums, rows.values());
      const nextOffset = positions.get(partition)!.nextOffset;
      for (const key of versions) summaries.push({ partition, nextOffset, summary: copySummary(sums.get(key)!) });
      for (const c of rows.values()) changelog.push(toRowStateChanged(c.after, producer, c.key));
    }
    return {
      positions: [...positions.values()],
      weight,
      changelog,
      trials,
      conflicts,
      finished,
      retracted,
      summaries,
      skipped,
      lag: [...lag.values()],
    };
  });
