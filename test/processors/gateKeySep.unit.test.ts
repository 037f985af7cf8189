import { describe, expect, it } from 'vitest';
import { toRunClosed } from '../../processors/folds/gates.ts';
import { versionKeyOf } from '../../processors/folds/versionSummary.ts';
import {
  applyRowstate,
  createGateStore,
  evictClosed,
  pinnedBy,
  restoreKeys,
} from '../../processors/operators/decideGates.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import { validateEvent } from '../../schemas/codec.ts';
import { candidateKey, KEY_SEP, rowStateKey } from '../../schemas/topics.ts';
import { trial } from '../helpers/events.ts';

/**
 * Ids may hold KEY_SEP (U+001F: ingest accepts it), so a record key of passk.rowstate or a version key need not split
 * into the parts it was joined from. The evicting gates must then decode rather than guess: a guessed version marked
 * evicted (the real one not) would leave a partial table, a guessed closed-runs key or agent version would evict or
 * leave unpinned what a decision reads.
 */
const state = (v: { suite: string; dataset_version: string; agent_version: string }, row_id: string, seq = 1) =>
  ({
    type: 'RowStateChanged',
    event_id: `e-${v.suite}-${v.agent_version}-${row_id}`,
    occurred_at: 1,
    producer: 'p',
    ...v,
    row_id,
    seq,
    n: 1,
    c: 1,
    ungraded: 0,
    class: 'stable_pass',
    attempt_records: [],
  }) as unknown as RowStateChanged;

const none = () => ({ versions: new Set<string>(), windows: new Set<string>() });

describe('gate keys with ids holding KEY_SEP', () => {
  it('ingest accepts an id holding U+001F (what the gates must handle)', () => {
    const t = trial({ suite: `billing${KEY_SEP}eu`, agent: { version: `v${KEY_SEP}1`, model: 'm' } });
    expect(validateEvent(JSON.parse(JSON.stringify(t))).type).toBe('TrialRecorded');
  });

  it('a restore decodes a row state whose key does not split into four parts, and skips an exact one', () => {
    const store = createGateStore();
    const odd = [
      { suite: `billing${KEY_SEP}eu`, dataset_version: 'd1', agent_version: 'v1' },
      { suite: 'billing', dataset_version: `d${KEY_SEP}1`, agent_version: 'v1' },
      { suite: 'billing', dataset_version: 'd1', agent_version: `v${KEY_SEP}1` },
    ];
    const keep = restoreKeys(store);
    for (const v of odd) expect(keep(rowStateKey({ ...v, row_id: 'r1' }))).toBe(true);
    expect(
      keep(rowStateKey({ suite: 'billing', dataset_version: 'd1', agent_version: 'v2', row_id: `r${KEY_SEP}1` })),
    ).toBe(true);
    // no version guessed: nothing marked evicted (each guess above would have named another version)
    expect([...store.evicted]).toEqual([]);
    const exact = { suite: 'billing', dataset_version: 'd1', agent_version: 'v3' };
    expect(keep(rowStateKey({ ...exact, row_id: 'r1' }))).toBe(false);
    expect([...store.evicted]).toEqual([versionKeyOf(exact)]);
  });

  it('restored then tailed, a version whose suite holds KEY_SEP holds every row, as when nothing is evicted', () => {
    const v = { suite: `billing${KEY_SEP}eu`, dataset_version: 'd1', agent_version: 'v1' };
    const store = createGateStore();
    // the restore: r1's record is decoded (its key is kept) and applied, then the tail brings r2
    const restored = [state(v, 'r1')].filter((e) => restoreKeys(store)(rowStateKey(e)));
    applyRowstate(store, restored, none());
    applyRowstate(store, [state(v, 'r2')], none());
    expect([...(store.rows.get(versionKeyOf(v))?.keys() ?? [])].sort()).toEqual(['r1', 'r2']);
    expect(store.evicted.size).toBe(0);
  });

  it("keeps a key's closed runs while a version of it is loaded, whatever its suite and agent version hold", () => {
    for (const v of [
      { suite: `billing${KEY_SEP}eu`, dataset_version: 'd1', agent_version: 'v1' },
      { suite: 'billing', dataset_version: 'd1', agent_version: `v${KEY_SEP}1` },
    ]) {
      const store = createGateStore();
      applyRowstate(store, [state(v, 'r1')], none());
      const finished: RunFinished = {
        event_id: `f-${v.suite}-${v.agent_version}`,
        type: 'RunFinished',
        schema_version: 1,
        occurred_at: 2,
        producer: 'test',
        run_id: 'run-1',
        suite: v.suite,
        dataset_version: v.dataset_version,
        agent: { version: v.agent_version },
        status: 'completed',
        trials: 1,
      };
      const run = toRunClosed(finished, 'p');
      store.closed.set(candidateKey(v.suite, v.agent_version), new Map([[run.event_id, run]]));
      expect(evictClosed(store, { all: true })).toEqual([]);
      expect(store.closedEvicted.size).toBe(0);
    }
  });

  it('pins a version whose agent version holds KEY_SEP when that agent version has production windows', () => {
    const v = { suite: 'billing', dataset_version: 'd1', agent_version: `v${KEY_SEP}1` };
    const store = createGateStore();
    applyRowstate(store, [state(v, 'r1')], none());
    store.snapshots.set(0, { shares: [{ agent_version: v.agent_version }] } as unknown as TraceWindowsUpdated);
    expect(pinnedBy(store)(versionKeyOf(v))).toBe(true);
    // another version of the same suite whose agent version is the last part of this one's is not pinned by it
    expect(pinnedBy(store)(versionKeyOf({ ...v, agent_version: '1' }))).toBe(false);
  });
});
