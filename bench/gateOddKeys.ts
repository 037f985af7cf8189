import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../log/index.ts';
import { emptyPrefix, evictPrefixClosed, foldPrefix, toGateBookSnapshot } from '../processors/folds/gateSnapshot.ts';
import { createGateStore } from '../processors/operators/decideGates.ts';
import { restoreSnapshotsOnly } from '../processors/topologies/gates.ts';
import type { GateBookSnapshot } from '../schemas/events/gateBookSnapshot.ts';
import { candidateKey } from '../schemas/topics.ts';
import { closedRunAt, comparisonAt } from './gateBook.ts';
import { deterministicEventId } from '../schemas/ids.ts';

/**
 * The embedded log's read of passk.rowstate's other keys at a gates restore (issue 26, item 6; `restoreSnapshotsOnly`
 * from the topic's outline): the other keys over `records_rowstate_odd`, then their records read by key and decoded,
 * of which `shelve` keeps each partition's latest (since 2026-12-07 from each snapshot key's latest record on:
 * `RowstateOutline.oddFrom`; before, every record of those keys). Those keys are the gate books' snapshots (and
 * the production windows'), one record per snapshot written, and nothing compacts the embedded log: a partition of
 * passk.decisions snapshotted every `gateSnapshotEvery` (20,000) records and at each clean stop holds, after 1M
 * decision events, about 50 of them plus one per stop. Here each of the 4 partitions holds `snapshots` records of the
 * snapshot the embedded default writes after 1M decision events (the gatebook stream, closed runs evicted, decided
 * ids looked up in the log: about 1 KB), against 1 each; no row state (they are not read: the partial index holds
 * only the other keys). Figures: the outline alone (the other keys' offsets and the partitions' ends) and the whole
 * first step (outline, the keys' records read and decoded, the shelf), best of `runs`.
 */
export interface OddKeysLine {
  readonly snapshots: number;
  readonly records: number;
  readonly outlineMs: number;
  readonly stepMs: number;
}

const T0 = Date.UTC(2026, 0, 1);
const PARTITIONS = 4;

/** The embedded default's snapshot of a partition after `events` decision events of the gatebook stream. */
const snapshotAfter = (events: number): GateBookSnapshot => {
  const s = emptyPrefix(0, true, 0);
  for (let start = 0; start < events; start += 1_000) {
    const [declared, confirm, verdict] = comparisonAt(start / 1_000, T0 + start);
    const batch = [declared, confirm, verdict].map((event, j) => ({ offset: start + j, event }));
    for (let i = start + 3; i < start + 1_000; i++) batch.push({ offset: i, event: closedRunAt(i) as never });
    foldPrefix(s, batch, start + 999);
  }
  evictPrefixClosed(s, [...new Set([...s.closed.values()].map((r) => candidateKey(r.suite, r.agent_version)))]);
  return toGateBookSnapshot(s, 0, PARTITIONS, 'bench');
};

export async function benchOddKeys(o: { snapshots: readonly number[]; events: number; runs: number }) {
  const base = snapshotAfter(o.events);
  const out: OddKeysLine[] = [];
  for (const snapshots of o.snapshots) {
    const dir = mkdtempSync(join(tmpdir(), 'passk-bench-oddkeys-'));
    const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL', partitions: PARTITIONS });
    try {
      for (let n = 0; n < snapshots; n++) {
        const through = Math.round(((n + 1) * o.events) / PARTITIONS / snapshots);
        const batch = Array.from({ length: PARTITIONS }, (_, partition) => ({
          ...base,
          event_id: deterministicEventId(base.occurred_at, 'GateBookSnapshot', partition, PARTITIONS, through),
          partition,
          through_offset: through,
        }));
        await log.publisher.publish(batch, { trusted: true });
      }
      let outlineMs = Infinity;
      let stepMs = Infinity;
      for (let r = 0; r < o.runs; r++) {
        let started = performance.now();
        await log.rowstateOutline?.({ versions: false });
        outlineMs = Math.min(outlineMs, performance.now() - started);
        started = performance.now();
        const store = createGateStore({ forgetDecided: true });
        await restoreSnapshotsOnly(log, store, `bench-oddkeys-${snapshots}-${r}`);
        stepMs = Math.min(stepMs, performance.now() - started);
        const got = store.bookSnapshots.size;
        if (got !== PARTITIONS) throw new Error(`restored ${got} partitions' snapshots, not ${PARTITIONS}`);
      }
      out.push({ snapshots, records: snapshots * PARTITIONS, outlineMs, stepMs });
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}
