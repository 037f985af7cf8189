import type { EventLog } from '../processors/ports.ts';
import { emptyPrefix, foldPrefix, toGateBookSnapshot } from '../processors/folds/gateSnapshot.ts';
import { toRowStateChanged, type StreamRowState } from '../processors/folds/rowState.ts';
import { foldTrials } from '../processors/folds/rowTable.ts';
import { createGateStore } from '../processors/operators/decideGates.ts';
import { restoreSnapshotsOnly } from '../processors/topologies/gates.ts';
import type { RowStateChanged } from '../schemas/events/decisions.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { comparisonAt } from './gateBook.ts';

/**
 * What the gates' evicting restore of passk.rowstate costs on Kafka as the topic grows (issue 26, item 6;
 * `restoreSnapshotsOnly`): Kafka has no index by key, so the restore walks every record of the topic to its end
 * (`restoreKeys`: each key looked at, its value left undecoded, its version marked evicted) to find the few gate book
 * and production-window snapshots. One namespace, passk.rowstate grown in steps (0, then 10k, 100k, 1M row states of
 * distinct keys: 50 rows a version, what compaction leaves), one gate book snapshot on it; at each step the restore
 * timed `runs` times with a fresh store and consumer group. The 0 step is what a restore reading the snapshots alone
 * would cost (a topic of their own).
 */
const T0 = Date.UTC(2026, 0, 1);
const ROWS = 50;

/** One version's 50 row states (three attempts each), the template the others are renamed from. */
const template = (): RowStateChanged[] => {
  const trials: TrialRecorded[] = [];
  for (let r = 0; r < ROWS; r++)
    for (let a = 0; a < 3; a++) {
      const at = T0 + r * 10 + a;
      trials.push({
        event_id: deterministicEventId(at, 'trial', r, a),
        type: 'TrialRecorded',
        schema_version: 1,
        occurred_at: at,
        producer: 'bench',
        suite: 's',
        dataset_version: 'd1',
        row_id: `row-${r}`,
        run_id: 'run-v0',
        attempt: a,
        agent: { version: 'v0' },
        passed: (r + a) % 7 !== 0,
        output: 'ok',
      });
    }
  const last = new Map<string, StreamRowState>();
  for (const ch of foldTrials(new Map(), trials)) last.set(ch.after.row_id, ch.after);
  return [...last.values()].map((s) => toRowStateChanged(s, 'bench'));
};

export interface KafkaRestoreLine {
  /** Row states on passk.rowstate (distinct keys). */
  readonly rowStates: number;
  /** Milliseconds of `restoreSnapshotsOnly`, each run: a fresh store and group. */
  readonly ms: readonly number[];
  /** Versions the restore marked evicted (one per version walked) and snapshots it found. */
  readonly evicted: number;
  readonly snapshots: number;
}

export async function benchGateRestoreKafka(o: {
  open: (namespace: string) => Promise<EventLog>;
  steps: readonly number[];
  runs: number;
  log: (line: string) => void;
}): Promise<KafkaRestoreLine[]> {
  const namespace = `bench-gaterestore-${Date.now().toString(36)}.`;
  const log = await o.open(namespace);
  const base = template();
  const out: KafkaRestoreLine[] = [];
  try {
    // one partition's gate book snapshot (a comparison declared, asked, decided): what the restore looks for
    const prefix = emptyPrefix(0, false, 0);
    foldPrefix(
      prefix,
      comparisonAt(0, T0).map((event, offset) => ({ offset, event })),
      2,
    );
    await log.publisher.publish([toGateBookSnapshot(prefix, 0, 1, 'bench')], { trusted: true });
    let written = 0;
    for (const step of o.steps) {
      const started = performance.now();
      // 100 versions (5,000 row states) a publish
      for (let v = written / ROWS; v < step / ROWS; v += 100) {
        const states: RowStateChanged[] = [];
        for (let w = v; w < Math.min(v + 100, step / ROWS); w++)
          for (const e of base)
            states.push({
              ...e,
              event_id: deterministicEventId(T0, 'RowStateChanged', w, e.row_id),
              agent_version: `v${w}`,
            });
        await log.publisher.publish(states, { trusted: true });
      }
      if (step > written)
        o.log(`  ${step - written} row states written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      written = Math.max(written, step);
      const ms: number[] = [];
      let evicted = 0;
      let snapshots = 0;
      for (let r = 0; r < o.runs; r++) {
        const store = createGateStore();
        const t = performance.now();
        await restoreSnapshotsOnly(log, store, `bench-gaterestore-${written}-${r}`);
        ms.push(performance.now() - t);
        evicted = store.evicted.size;
        snapshots = store.bookSnapshots.size;
      }
      o.log(`  ${written} row states: restore ${ms.map((x) => x.toFixed(0)).join(', ')} ms; ${evicted} evicted`);
      out.push({ rowStates: written, ms, evicted, snapshots });
    }
  } finally {
    await log.close();
  }
  return out;
}
