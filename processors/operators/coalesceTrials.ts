import { map, type OperatorFunction } from 'rxjs';
import type { RowState } from '../folds/rowState.ts';
import { versionKeyOf, type VersionSnapshot } from '../folds/versionSummary.ts';
import type { FoldedTrials, Position } from './foldRows.ts';
import { KEY_SEP, tpKey } from '../../schemas/topics.ts';

/**
 * Several folded batches as one durable unit: the latest state per row, the furthest position per
 * partition, the latest snapshot per (partition, version).
 */
export const mergeFolded = (group: readonly FoldedTrials[]): FoldedTrials => {
  if (group.length === 1) return group[0]!;
  const changes = new Map<string, RowState>();
  const positions = new Map<string, Position>();
  const lag = new Map<string, FoldedTrials['lag'][number]>();
  const summaries = new Map<string, VersionSnapshot>();
  let weight = 0;
  let skipped = 0;
  for (const f of group) {
    for (const [key, r] of f.changes) changes.set(key, r);
    for (const p of f.positions) {
      const key = tpKey(p);
      if ((positions.get(key)?.nextOffset ?? -1) < p.nextOffset) positions.set(key, p);
    }
    for (const l of f.lag) lag.set(tpKey(l), l);
    for (const s of f.summaries) {
      const key = `${s.partition}${KEY_SEP}${versionKeyOf(s.summary)}`;
      if ((summaries.get(key)?.nextOffset ?? -1) <= s.nextOffset) summaries.set(key, s);
    }
    weight += f.weight;
    skipped += f.skipped;
  }
  return {
    positions: [...positions.values()],
    weight,
    changes,
    trials: group.flatMap((f) => f.trials),
    finished: group.flatMap((f) => f.finished),
    summaries: [...summaries.values()],
    skipped,
    lag: [...lag.values()],
  };
};

/** A changelog record per changed row per durable unit, not per event (Kafka Streams' record cache). */
export const coalesceTrials = (): OperatorFunction<readonly FoldedTrials[], FoldedTrials> => map(mergeFolded);
