import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { ClickHouseRowSink } from './rowSink.ts';

/**
 * The trial topology's sink port (processors/topology.ts `TrialSink`, matched structurally):
 * each durable unit is written and flushed before the promise resolves, so offsets committed
 * after it never run ahead of the store.
 */
export const toTrialSink = (sink: ClickHouseRowSink) => ({
  async writeTrials(unit: { trials: readonly TrialRecorded[]; rowStates: readonly RowStateChanged[]; finished: readonly RunFinished[] }): Promise<void> {
    await sink.writeEvents([...unit.trials, ...unit.rowStates, ...unit.finished]);
    await sink.flush();
  },
});
