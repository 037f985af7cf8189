import {
  evolveRow,
  retractionRowKey,
  retractRow,
  toRowStateChanged,
  trialRowKey,
  type StreamRowState,
} from '../../processors/folds/rowState.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { StoreClient } from '../../sinks/clickhouse/connection.ts';
import { eventToRow } from '../../sinks/clickhouse/index.ts';
import type { TableName } from '../../sinks/clickhouse/schema/tables.ts';

/**
 * A store written as the processors write it (the row-state store tests: rowCountsFromState, explorerFromState): the
 * events through the sink's own `eventToRow`, one insert per table; the trials the real fold (`evolveRow`) takes and
 * each row state it emits; retractions through `retractRow`. The row states folded so far are `states`.
 */
export interface RowStateWriter {
  readonly states: Map<string, StreamRowState>;
  /** Stores the events (one insert per table); `insert_deduplicate: 0` stores a copy of a part already stored. */
  write(events: readonly PasskEvent[], settings?: { insert_deduplicate: 0 }): Promise<void>;
  /** The trials the fold takes (a refused one is left out) and the row state it emits for each. */
  fold(trials: readonly TrialRecorded[]): { taken: TrialRecorded[]; emitted: RowStateChanged[] };
  /** The row state a retraction leaves. */
  retract(r: RunRetracted): RowStateChanged;
}

export const rowStateWriter = (opts: {
  /** The store, opened in the file's `beforeAll`. */
  readonly store: () => StoreClient;
  readonly producer: string;
  /**
   * While it says so, row states are written as a store before migration 20 takes them (no `attempt_extras` column).
   */
  readonly before20?: () => boolean;
}): RowStateWriter => {
  const states = new Map<string, StreamRowState>();
  return {
    states,
    async write(events, settings) {
      const byTable = new Map<string, string[]>();
      for (const e of events) {
        const stored = eventToRow(e);
        if (!stored) continue;
        const lines = byTable.get(stored.table) ?? [];
        if (stored.table === 'row_state' && opts.before20?.()) {
          const { attempt_extras, ...row } = stored.row as Record<string, unknown>;
          void attempt_extras;
          lines.push(JSON.stringify(row));
        } else lines.push(JSON.stringify(stored.row));
        byTable.set(stored.table, lines);
      }
      for (const [table, lines] of byTable)
        await opts.store().insertJsonRows(table as TableName, Buffer.from(lines.join('\n') + '\n'), settings);
    },
    fold(trials) {
      const taken: TrialRecorded[] = [];
      const emitted: RowStateChanged[] = [];
      for (const t of trials) {
        const key = trialRowKey(t);
        const was = states.get(key);
        const next = evolveRow(was, t);
        if (next === was) continue;
        states.set(key, next);
        taken.push(t);
        emitted.push(toRowStateChanged(next, opts.producer));
      }
      return { taken, emitted };
    },
    retract(r) {
      const key = retractionRowKey(r);
      const next = retractRow(states.get(key), r);
      states.set(key, next);
      return toRowStateChanged(next, opts.producer);
    },
  };
};
