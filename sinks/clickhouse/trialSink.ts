import type { TrialSink } from '../../processors/ports.ts';
import type { ClickHouseRowSink } from './rowSink.ts';
import { snapshotRow } from './rows/snapshotRow.ts';

/** One durable unit of the trial topology (`TrialSink.writeTrials`, processors/topologies/trials.ts). */
export type TrialUnit = Parameters<TrialSink['writeTrials']>[0];

/**
 * Writes a unit's raw trials, row states, finished runs, retractions and version snapshots, and resolves once all
 * of them are durable: the offsets committed after it never run ahead of the store. Every table is
 * idempotent (event ids, the row state's seq, the snapshot's next offset), so a replayed unit
 * changes nothing.
 */
export const writeTrialUnit = async (sink: ClickHouseRowSink, unit: TrialUnit): Promise<void> => {
  await sink.writeEvents([...unit.trials, ...unit.rowStates, ...unit.finished, ...(unit.retracted ?? [])]);
  if (unit.summaries?.length) await sink.write('version_summaries', unit.summaries.map(snapshotRow));
  await sink.flush();
};

/** The trial topology's sink port over the store's writer. */
export const toTrialSink = (sink: ClickHouseRowSink): TrialSink => ({
  writeTrials: (unit) => writeTrialUnit(sink, unit),
});
