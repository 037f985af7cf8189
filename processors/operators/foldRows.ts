import { map, type OperatorFunction } from 'rxjs';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { RowState } from '../folds/rowState.ts';
import { foldTrialsOwned } from '../folds/rowTable.ts';
import type { RowFoldOptions } from '../folds/rowState.ts';
import { applyRowChanges, copySummary, type VersionSnapshot } from '../folds/versionSummary.ts';
import type { EventBatch } from '../ports.ts';
import type { RowStore } from './rowStore.ts';

export interface Position {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: number;
}

/** A consumer batch after the fold: what must become durable before its position is committed. */
export interface FoldedTrials {
  readonly positions: readonly Position[];
  /** In-flight records this unit holds (released when committed). */
  readonly weight: number;
  /** Rows changed: row key → final state. */
  readonly changes: ReadonlyMap<string, RowState>;
  readonly trials: readonly TrialRecorded[];
  readonly finished: readonly RunFinished[];
  /**
   * The partition's summary of each version the batch changed, copied at fold time (the store's
   * summaries are updated in place by later batches), as of the batch's position.
   */
  readonly summaries: readonly VersionSnapshot[];
  /** Valid events of another type on the trials topic: counted, not folded. */
  readonly skipped: number;
  readonly lag: readonly { topic: string; partition: number; lag: number }[];
}

/** The in-flight weight of a batch: its events, at least 1 (a batch of dead letters still holds a position). */
export const weightOf = (b: EventBatch): number => Math.max(1, b.events.length);

/**
 * Folds each batch into its partition's row table in one plain loop (no per-key streams; the rows
 * changed in place, a copy of each changed row emitted, `foldTrialsOwned`), updates
 * the partition's version summaries once per changed row, and snapshots the versions it changed.
 */
export const foldRows = (store: RowStore, opts: RowFoldOptions = {}): OperatorFunction<EventBatch, FoldedTrials> =>
  map((batch) => {
    const trials: TrialRecorded[] = [];
    const finished: RunFinished[] = [];
    let skipped = 0;
    for (const { event } of batch.events) {
      if (event.type === 'TrialRecorded') trials.push(event);
      else if (event.type === 'RunFinished') finished.push(event);
      else skipped++;
    }
    const changes = foldTrialsOwned(store.table(batch.partition), trials, opts);
    const sums = store.summaries(batch.partition);
    const versions = applyRowChanges(sums, changes);
    const nextOffset = batch.lastOffset + 1;
    const summaries = [...versions].map((key) => ({
      partition: batch.partition,
      nextOffset,
      summary: copySummary(sums.get(key)!),
    }));
    return {
      positions: [{ topic: batch.topic, partition: batch.partition, nextOffset }],
      weight: weightOf(batch),
      changes: new Map(changes.map((c) => [c.key, c.after])),
      trials,
      finished,
      summaries,
      skipped,
      lag: [{ topic: batch.topic, partition: batch.partition, lag: Math.max(0, batch.highWatermark - nextOffset) }],
    };
  });
