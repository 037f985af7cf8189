import { map, type OperatorFunction } from 'rxjs';
import type { DatasetRowUpserted, FailureConfirmed } from '../../schemas/events/datasets.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { evolveDataset, type DatasetEvent, type DatasetState } from '../core/datasets.ts';
import type { EventBatch } from '../ports.ts';
import type { Position } from './foldUnits.ts';
import { weightOf } from './foldUnits.ts';
import { pushAll } from '../core/arrays.ts';

/** Datasets of the owned partitions of passk.datasets: partition → dataset id → state. */
export type DatasetTables = Map<number, Map<string, DatasetState>>;

export interface FoldedDatasets {
  readonly positions: readonly Position[];
  readonly weight: number;
  /** The batch's own events, for the store. */
  readonly events: readonly (DatasetRowUpserted | FailureConfirmed)[];
  /** Rows decided from confirmed failures, to publish. */
  readonly emitted: readonly DatasetRowUpserted[];
}

const isDatasetEvent = (e: PasskEvent): e is DatasetEvent =>
  e.type === 'DatasetRowUpserted' || e.type === 'FailureConfirmed';

/** Folds a batch into one partition's datasets, in order, one plain loop. */
export const foldDatasetBatch = (
  tables: DatasetTables,
  partition: number,
  events: readonly PasskEvent[],
  producer: string,
): { events: DatasetEvent[]; emitted: DatasetRowUpserted[] } => {
  let table = tables.get(partition);
  if (!table) tables.set(partition, (table = new Map()));
  const own: DatasetEvent[] = [];
  const emitted: DatasetRowUpserted[] = [];
  for (const e of events) {
    if (!isDatasetEvent(e)) continue;
    own.push(e);
    const step = evolveDataset(table.get(e.dataset_id), e, producer);
    table.set(e.dataset_id, step.state);
    pushAll(emitted, step.emitted);
  }
  return { events: own, emitted };
};

/** Folds each batch of passk.datasets; a confirmed failure decides a new must-not-break row. */
export const foldDatasets = (tables: DatasetTables, producer: string): OperatorFunction<EventBatch, FoldedDatasets> =>
  map((batch) => {
    const { events, emitted } = foldDatasetBatch(
      tables,
      batch.partition,
      batch.events.map((e) => e.event),
      producer,
    );
    return {
      positions: [{ topic: batch.topic, partition: batch.partition, nextOffset: batch.lastOffset + 1 }],
      weight: weightOf(batch),
      events,
      emitted,
    };
  });
