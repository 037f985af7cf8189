import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import { emptyBook, foldBookInto, isDecision, processorsFold, toRunClosed } from '../../processors/folds/gates.ts';
import { fromRowStateChanged, toRowStateChanged, type StreamRowState } from '../../processors/folds/rowState.ts';
import { foldTrials } from '../../processors/folds/rowTable.ts';
import { versionKeyOf } from '../../processors/folds/versionSummary.ts';
import {
  addClosed,
  applyRowstate,
  createGateStore,
  evictRows,
  gateStep,
  pinnedBy,
  reloadPinned,
  restoreKeys,
  type Decided,
  type GateDecisionOptions,
  type GateInput,
  type GateStore,
  type ClosedReload,
  type RowReload,
  closedPinnedBy,
} from '../../processors/operators/decideGates.ts';
import {
  chunkSnapshot,
  emptyPrefix,
  evictPrefixClosed,
  foldPrefix,
  joinChunks,
  restorePrefix,
  toGateBookSnapshot,
} from '../../processors/folds/gateSnapshot.ts';
import { applyClosed } from '../../processors/topologies/gates.ts';
import type { EventBatch } from '../../processors/ports.ts';
import type { ComparisonDeclared, RunClosed } from '../../schemas/events/comparisons.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { RunRetracted } from '../../schemas/events/runRetracted.ts';
import type { TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import {
  candidateKey,
  gateBookChunkKey,
  gateBookKey,
  KEY_SEP,
  keyOf,
  TOPICS,
  windowsKey,
} from '../../schemas/topics.ts';
import { T0, trial } from '../helpers/processorFixtures.ts';

/**
 * Issue 26, item 6: the gates' row tables are a cache over passk.rowstate. Random sequences of trials (their row
 * states), runs closed, comparisons declared between any two of four versions (decided, or sent to confirmation),
 * evictions forced after any step (every version nothing pins) and restarts (a new store restored from the logs, as
 * the topology restores it): the gates with eviction emit exactly what the gates that never evict emit, event for
 * event, in the same order. Closed runs are evicted with the rows and reloaded by key from passk.decisions, runs are
 * retracted (a run counted once counts again), and a restart restores no closed run (every key evicted). The never-evicting gates are the ones `gateLayout.property.unit.test.ts` checks against
 * the offline gate (`gate --from-store`'s computation).
 */
const SUITE = 'refunds';
const DV = 'd1';
// one id holds KEY_SEP (ingest accepts it): its row keys do not split into their four parts, so a restore decodes them
const VERSIONS = ['a', 'b', 'c', `d${KEY_SEP}x`] as const;
const ROWS = ['r0', 'r1', 'r2'] as const;

const OP = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('trial' as const),
      version: fc.constantFrom(...VERSIONS),
      row: fc.constantFrom(...ROWS),
      passed: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('close' as const), version: fc.constantFrom(...VERSIONS) }) },
  {
    // a run retracted (every row): counted once by a closed run, it no longer is, and the run's id decides again
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('retract' as const),
      version: fc.constantFrom(...VERSIONS),
      run: fc.nat({ max: 2 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        kind: fc.constant('declare' as const),
        baseline: fc.constantFrom(...VERSIONS),
        candidate: fc.constantFrom(...VERSIONS),
        confirmations: fc.constantFrom(0, 0, 3),
      })
      .filter((d) => d.baseline !== d.candidate),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('evict' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const) }) },
);
type Op = typeof OP extends fc.Arbitrary<infer T> ? T : never;

type Step =
  | { readonly kind: 'rowstate'; readonly events: RowStateChanged[] }
  | { readonly kind: 'decision'; readonly event: PasskEvent }
  | { readonly kind: 'evict' }
  | { readonly kind: 'restart' };

/** The ops as what reaches the gates: trials folded to row states (upstream of the gates, shared by both runs). */
const timelineOf = (ops: readonly Op[]): Step[] => {
  const table = new Map<string, StreamRowState>();
  const runs = new Map<string, number>(); // version → its current run's index
  const counts = new Map<string, number>(); // run → trials so far
  const out: Step[] = [];
  let t = T0;
  let declared = 0;
  for (const op of ops) {
    t += 1_000;
    if (op.kind === 'trial') {
      const run = `run-${op.version}-${runs.get(op.version) ?? 0}`;
      const n = counts.get(run) ?? 0;
      counts.set(run, n + 1);
      const tr = trial({
        suite: SUITE,
        dataset_version: DV,
        row: op.row,
        version: op.version,
        run,
        attempt: n,
        passed: op.passed,
        output: 'x',
        at: t,
      });
      out.push({ kind: 'rowstate', events: foldTrials(table, [tr]).map((ch) => toRowStateChanged(ch.after, 'p')) });
    } else if (op.kind === 'retract') {
      const run = `run-${op.version}-${op.run}`;
      const retractions: RunRetracted[] = ROWS.map((row) => ({
        event_id: deterministicEventId(t, 'RunRetracted', run, row),
        type: 'RunRetracted',
        schema_version: 1,
        occurred_at: t,
        producer: 'test',
        retraction_id: `retract-${run}`,
        run_id: run,
        suite: SUITE,
        dataset_version: DV,
        agent_version: op.version,
        row_id: row,
        reason: 'test',
        retracted_by: 'test',
        trials: counts.get(run) ?? 0,
      }));
      const events = foldTrials(table, retractions).map((ch) => toRowStateChanged(ch.after, 'p'));
      if (events.length > 0) out.push({ kind: 'rowstate', events });
    } else if (op.kind === 'close') {
      const k = runs.get(op.version) ?? 0;
      const run = `run-${op.version}-${k}`;
      runs.set(op.version, k + 1);
      const finished: RunFinished = {
        event_id: deterministicEventId(t, 'RunFinished', run),
        type: 'RunFinished',
        schema_version: 1,
        occurred_at: t,
        producer: 'test',
        run_id: run,
        suite: SUITE,
        dataset_version: DV,
        agent: { version: op.version },
        status: 'completed',
        trials: counts.get(run) ?? 0,
      };
      out.push({ kind: 'decision', event: toRunClosed(finished, 'p') });
    } else if (op.kind === 'declare') {
      const id = `gate-${declared++}`;
      const d: ComparisonDeclared = {
        event_id: deterministicEventId(t, 'ComparisonDeclared', id),
        type: 'ComparisonDeclared',
        schema_version: 1,
        occurred_at: t,
        producer: 'test',
        comparison_id: id,
        suite: SUITE,
        dataset_version: DV,
        baseline: op.baseline,
        candidate: op.candidate,
        confirmation_attempts: op.confirmations,
      };
      out.push({ kind: 'decision', event: d });
    } else out.push({ kind: op.kind });
  }
  return out;
};

const batchOf = (topic: string, partition: number, events: readonly PasskEvent[], offset = 0): EventBatch => ({
  topic,
  partition,
  events: events.map((event, i) => ({ topic, partition, offset: offset + i, key: keyOf(event), event })),
  lastOffset: offset + events.length - 1,
  highWatermark: offset + events.length,
});

interface Run {
  /** What was decided, with the index of the timeline step that decided it (a delay would show). */
  readonly emitted: { readonly at: number; readonly event: Decided }[];
  /** Reloads that brought a version back, and decisions made in a step that reloaded. */
  reloads: number;
  /** Versions evicted in all. */
  evicted: number;
  /** Versions a restore skipped (evicted undecoded), and pinned versions found whole after a restore's tick. */
  skipped: number;
  pinnedAtRestore: number;
  /** Closed-runs keys evicted in all, reloads that brought some back, and pinned keys found whole after a restore. */
  closedEvicted: number;
  closedReloads: number;
  closedPinnedAtRestore: number;
}

/**
 * One gates instance owning every partition of passk.decisions, fed the timeline; its own decisions are echoed
 * back (its partition, and the whole-topic tail). A restart restores a new store from the logs: the owned
 * partitions folded (what snapshot + tail give), every RunClosed, the whole of passk.rowstate, then a tick.
 */
const runGates = async (timeline: readonly Step[], partitions: number, evicting: boolean, idleMs = 0): Promise<Run> => {
  const rowLog: RowStateChanged[] = [];
  const decisionLog: PasskEvent[][] = Array.from({ length: partitions }, () => []);
  const run: Run = {
    emitted: [],
    reloads: 0,
    evicted: 0,
    skipped: 0,
    pinnedAtRestore: 0,
    closedEvicted: 0,
    closedReloads: 0,
    closedPinnedAtRestore: 0,
  };
  // passk.rowstate read again by key: every record of the versions asked for, as the topology's readToEnd does
  const reload: RowReload = async (versions) => {
    await Promise.resolve();
    run.reloads++;
    return rowLog.filter((e) => versions.has(versionKeyOf(e)));
  };
  // passk.decisions read again by key: every RunClosed of the keys asked for, on every partition
  const reloadClosed: ClosedReload = async (keys) => {
    await Promise.resolve();
    run.closedReloads++;
    return runsOf(decisionLog).filter((e) => keys.has(candidateKey(e.suite, e.agent_version)));
  };
  const o: GateDecisionOptions = {
    producer: 'p',
    partitionOf,
    ...(evicting ? { evict: { idleMs }, reload, reloadClosed } : {}),
  };
  const fresh = (): GateStore => {
    const s = createGateStore();
    s.decisionPartitions = partitions;
    for (let p = 0; p < partitions; p++) s.books.set(p, emptyBook());
    return s;
  };
  let store = fresh();
  const apply = async (first: GateInput) => {
    const queue = [first];
    while (queue.length > 0) {
      const input = queue.shift()!;
      const evictedBefore = store.evicted.size;
      const closedBefore = store.closedEvicted.size;
      const out = await gateStep(store, input, o);
      run.evicted += Math.max(0, store.evicted.size - evictedBefore);
      run.closedEvicted += Math.max(0, store.closedEvicted.size - closedBefore);
      for (const e of out.emitted) {
        run.emitted.push({ at: now, event: e });
        const p = partitionOf(keyOf(e), partitions);
        decisionLog[p]!.push(e);
        queue.push({ source: 'decisions', batch: batchOf(TOPICS.decisions, p, [e]) });
        queue.push({ source: 'closed', batch: batchOf(TOPICS.decisions, p, [e]) });
      }
    }
  };
  let now = -1;
  for (const step of timeline) {
    now++;
    if (step.kind === 'rowstate') {
      rowLog.push(...step.events);
      await apply({ source: 'rowstate', batch: batchOf(TOPICS.rowstate, 0, step.events) });
    } else if (step.kind === 'decision') {
      const p = partitionOf(keyOf(step.event), partitions);
      decisionLog[p]!.push(step.event);
      await apply({ source: 'decisions', batch: batchOf(TOPICS.decisions, p, [step.event]) });
      await apply({ source: 'closed', batch: batchOf(TOPICS.decisions, p, [step.event]) });
    } else if (step.kind === 'evict') {
      if (!evicting) continue;
      const closedBefore = store.closedEvicted.size;
      run.evicted += evictRows(store, { all: true, closed: true }).length;
      run.closedEvicted += store.closedEvicted.size - closedBefore;
      // what is left is exactly what open comparisons pin, rows and closed runs
      const pinned = pinnedBy(store);
      for (const key of store.rows.keys()) expect(pinned(key)).toBe(true);
      const closedPinned = closedPinnedBy(store);
      for (const key of store.closed.keys()) expect(closedPinned(key)).toBe(true);
    } else {
      store = fresh();
      // evicting, the snapshots left every closed run out (the most a restore can miss): each key with runs is
      // evicted, and the tick reloads those the restored books name
      if (evicting)
        for (const e of runsOf(decisionLog)) store.closedEvicted.add(candidateKey(e.suite, e.agent_version));
      for (const [p, events] of decisionLog.entries())
        for (const e of events) {
          if (isDecision(e)) foldBookInto(store.books.get(p)!, e, processorsFold(0));
          if (e.type === 'RunClosed') addClosed(store, e);
        }
      if (evicting) expect(store.closed.size).toBe(0);
      const none = { versions: new Set<string>(), windows: new Set<string>() };
      if (!evicting) applyRowstate(store, rowLog, none);
      else {
        // the gates topology's restore with eviction on: every row state skipped by its key, undecoded, its version
        // evicted (`restoreKeys`), but for the keys that do not split into their four parts: decoded and applied; the
        // tick reloads what the restored books pin before it decides
        const keep = restoreKeys(store);
        const read = rowLog.filter((e) => keep(keyOf(e)));
        expect(read.every((e) => keyOf(e).split(KEY_SEP).length !== 4)).toBe(true);
        applyRowstate(store, read, none);
        run.skipped += store.evicted.size;
      }
      await apply({ source: 'tick' });
      if (evicting) {
        // nothing a restored comparison pins was left out: its table is what passk.rowstate holds of it
        const pinned = pinnedBy(store);
        for (const [key, table] of tablesOf(rowLog))
          if (pinned(key)) {
            expect(store.evicted.has(key)).toBe(false);
            expect(store.rows.get(key)).toEqual(table);
            run.pinnedAtRestore++;
          }
        // and every closed-runs key they name holds exactly the log's runs of it
        const closedPinned = closedPinnedBy(store);
        for (const [key, runs] of closedOf(decisionLog))
          if (closedPinned(key)) {
            expect(store.closedEvicted.has(key)).toBe(false);
            expect(store.closed.get(key)).toEqual(runs);
            run.closedPinnedAtRestore++;
          }
      }
    }
  }
  return run;
};

/** Every RunClosed of passk.decisions, partition after partition. */
const runsOf = (log: readonly PasskEvent[][]): RunClosed[] =>
  log.flatMap((events) => events.filter((e): e is RunClosed => e.type === 'RunClosed'));

/** The closed runs passk.decisions holds, per suite␟agent version key, by event id. */
const closedOf = (log: readonly PasskEvent[][]): Map<string, Map<string, RunClosed>> => {
  const out = new Map<string, Map<string, RunClosed>>();
  for (const e of runsOf(log)) {
    const key = candidateKey(e.suite, e.agent_version);
    let runs = out.get(key);
    if (!runs) out.set(key, (runs = new Map()));
    runs.set(e.event_id, e);
  }
  return out;
};

/** The row tables passk.rowstate holds: per version, each row's highest seq (what a never-evicting restore loads). */
const tablesOf = (log: readonly RowStateChanged[]): Map<string, Map<string, StreamRowState>> => {
  const tables = new Map<string, Map<string, StreamRowState>>();
  for (const e of log) {
    const key = versionKeyOf(e);
    let table = tables.get(key);
    if (!table) tables.set(key, (table = new Map()));
    if ((table.get(e.row_id)?.seq ?? -1) < e.seq) table.set(e.row_id, fromRowStateChanged(e));
  }
  return tables;
};

describe('gates that evict row tables decide as gates that never do', () => {
  it('emits the same decisions, in the same order, over random trials, comparisons, evictions and restarts', async () => {
    let reloadedThenDecided = 0;
    let evictions = 0;
    let skipped = 0;
    let pinnedAtRestore = 0;
    let closedEvicted = 0;
    let closedReloads = 0;
    let closedPinnedAtRestore = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(OP, { minLength: 5, maxLength: 60 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(0, 5_000), // the idle window (event time; one op is 1 s): idle versions go at a restore
        async (ops, partitions, idleMs) => {
          const timeline = timelineOf(ops);
          const full = await runGates(timeline, partitions, false);
          const evicting = await runGates(timeline, partitions, true, idleMs);
          expect(evicting.emitted).toEqual(full.emitted);
          evictions += evicting.evicted;
          skipped += evicting.skipped;
          pinnedAtRestore += evicting.pinnedAtRestore;
          closedEvicted += evicting.closedEvicted;
          closedReloads += evicting.closedReloads;
          closedPinnedAtRestore += evicting.closedPinnedAtRestore;
          if (evicting.reloads > 0 && evicting.emitted.length > 0) reloadedThenDecided++;
        },
      ),
      { numRuns: 300 },
    );
    // the property was not vacuous: versions were evicted, and gates decided after reloads
    expect(evictions).toBeGreaterThan(100);
    expect(reloadedThenDecided).toBeGreaterThan(10);
    // and restores skipped versions by key, and found pinned ones whole
    expect(skipped).toBeGreaterThan(50);
    expect(pinnedAtRestore).toBeGreaterThan(10);
    // closed runs were evicted with their versions and reloaded, and restores found the pinned ones whole
    expect(closedEvicted).toBeGreaterThan(100);
    expect(closedReloads).toBeGreaterThan(50);
    expect(closedPinnedAtRestore).toBeGreaterThan(10);
  });
});

/** A restored book on partition 0 with one open comparison, gate-1 (baseline → candidate). */
const declare = (store: GateStore, baseline: string, candidate: string) => {
  const book = emptyBook();
  const d: ComparisonDeclared = {
    event_id: 'decl',
    type: 'ComparisonDeclared',
    schema_version: 1,
    occurred_at: T0,
    producer: 'test',
    comparison_id: 'gate-1',
    suite: SUITE,
    dataset_version: DV,
    baseline,
    candidate,
  };
  foldBookInto(book, d, processorsFold(0));
  store.books.set(0, book);
};

describe('reloading an evicted version', () => {
  const stateOf = (version: string, row: string, passed: boolean, at: number, table: Map<string, StreamRowState>) =>
    foldTrials(table, [
      trial({
        suite: SUITE,
        dataset_version: DV,
        row,
        version,
        run: 'run-1',
        attempt: at,
        passed,
        output: 'x',
        at: T0 + at,
      }),
    ]).map((ch) => toRowStateChanged(ch.after, 'p'));

  it('keeps a row state that arrives while the read runs, past the end the read saw', async () => {
    const table = new Map<string, StreamRowState>();
    const log = [...stateOf('a', 'r0', true, 1, table), ...stateOf('a', 'r1', true, 2, table)];
    const store = createGateStore();
    applyRowstate(store, log, { versions: new Set(), windows: new Set() });
    expect(evictRows(store, { all: true })).toEqual([
      versionKeyOf({ suite: SUITE, dataset_version: DV, agent_version: 'a' }),
    ]);
    // arrives while evicted and nothing reloads: not kept (the log holds it)
    const early = stateOf('a', 'r2', false, 3, table);
    log.push(...early);
    applyRowstate(store, early, { versions: new Set(), windows: new Set() });
    expect(store.rows.size).toBe(0);
    declare(store, 'a', 'b');
    const late = stateOf('a', 'r0', false, 4, table);
    const reloaded = await reloadPinned(store, async () => {
      const seen = [...log]; // the end the read sees
      // pushed by the feed while the read runs: durable after that end
      log.push(...late);
      applyRowstate(store, late, { versions: new Set(), windows: new Set() });
      return seen;
    });
    expect([...reloaded]).toEqual([versionKeyOf({ suite: SUITE, dataset_version: DV, agent_version: 'a' })]);
    const rows = store.view.rows(SUITE, DV, 'a');
    expect([...rows.keys()].sort()).toEqual(['r0', 'r1', 'r2']);
    expect(rows.get('r0')).toMatchObject({ seq: late[0]!.seq, c: 1, n: 2 });
    expect(store.evicted.size).toBe(0);
  });

  it('reloads nothing when the read was cut short, and the comparison does not decide on a partial table', async () => {
    const table = new Map<string, StreamRowState>();
    const store = createGateStore();
    applyRowstate(store, stateOf('a', 'r0', true, 1, table), { versions: new Set(), windows: new Set() });
    evictRows(store, { all: true });
    declare(store, 'a', 'b');
    expect((await reloadPinned(store, async () => undefined)).size).toBe(0);
    expect(store.evicted.size).toBe(1);
    expect(store.rows.size).toBe(0);
  });
});

describe('what eviction keeps', () => {
  const at = (version: string, t: number, table: Map<string, StreamRowState>) =>
    foldTrials(table, [
      trial({
        suite: SUITE,
        dataset_version: DV,
        row: 'r0',
        version,
        run: 'run-1',
        attempt: 0,
        passed: true,
        output: 'x',
        at: t,
      }),
    ]).map((ch) => toRowStateChanged(ch.after, 'p'));
  const key = (version: string) => versionKeyOf({ suite: SUITE, dataset_version: DV, agent_version: version });

  it('keeps the versions of agents with production windows, and recent versions, and evicts idle ones', () => {
    const table = new Map<string, StreamRowState>();
    const DAY = 86_400_000;
    const store = createGateStore();
    const events = [...at('old', T0, table), ...at('prod', T0, table), ...at('recent', T0 + 9 * DAY, table)];
    applyRowstate(store, events, { versions: new Set(), windows: new Set() });
    // the windows' snapshot of a partition of passk.traces: what the alerts read (offlinePassAt1) pins its agent
    const share = { agent_version: 'prod' } as TraceWindowsUpdated['shares'][number];
    store.snapshots.set(0, { shares: [share] } as unknown as TraceWindowsUpdated);
    expect(evictRows(store, { idleMs: 7 * DAY })).toEqual([key('old')]);
    expect([...store.rows.keys()].sort()).toEqual([key('prod'), key('recent')]);
    expect(evictRows(store, { all: true })).toEqual([key('recent')]);
    expect([...store.rows.keys()]).toEqual([key('prod')]);
  });

  it('a restore reads the snapshots only, skips every row state by key, and its tick reloads what is pinned', async () => {
    const table = new Map<string, StreamRowState>();
    const log = ['a', 'b', 'c', 'prod'].flatMap((v, i) => at(v, T0 + i, table));
    const store = createGateStore();
    store.decisionPartitions = 1;
    const keep = restoreKeys(store);
    expect([gateBookKey(0), gateBookChunkKey(0, 'a', 1), windowsKey(3)].map(keep)).toEqual([true, true, true]);
    expect(log.filter((e) => keep(keyOf(e)))).toEqual([]);
    expect([...store.evicted].sort()).toEqual([key('a'), key('b'), key('c'), key('prod')]);
    // restored: a book with a → b open, and production windows of prod
    declare(store, 'a', 'b');
    const share = { agent_version: 'prod' } as TraceWindowsUpdated['shares'][number];
    store.snapshots.set(0, { shares: [share] } as unknown as TraceWindowsUpdated);
    const asked: string[] = [];
    await gateStep(
      store,
      { source: 'tick' },
      {
        producer: 'p',
        partitionOf,
        evict: {},
        reload: async (versions) => {
          asked.push(...versions);
          return log.filter((e) => versions.has(versionKeyOf(e)));
        },
      },
    );
    expect(asked.sort()).toEqual([key('a'), key('b'), key('prod')]);
    expect([...store.evicted]).toEqual([key('c')]);
    expect(store.view.rows(SUITE, DV, 'a').get('r0')?.seq).toBe(log[0]!.seq);
  });

  it('a row state dated in the future moves the idle clock no further than a day past now', () => {
    const table = new Map<string, StreamRowState>();
    const DAY = 86_400_000;
    const store = createGateStore();
    const now = Date.now();
    const events = [...at('today', now, table), ...at('skewed', now + 365 * DAY, table)];
    applyRowstate(store, events, { versions: new Set(), windows: new Set() });
    // with the clock at the skewed trial, a version that ran today would be a year idle and evicted
    expect(evictRows(store, { idleMs: 7 * DAY })).toEqual([]);
    expect([...store.rows.keys()].sort()).toEqual([key('skewed'), key('today')]);
  });
});

describe('evicting closed runs', () => {
  const closedRun = (version: string, run: string, at: number): RunClosed =>
    toRunClosed(
      {
        event_id: deterministicEventId(at, 'RunFinished', run),
        type: 'RunFinished',
        schema_version: 1,
        occurred_at: at,
        producer: 'test',
        run_id: run,
        suite: SUITE,
        dataset_version: DV,
        agent: { version },
        status: 'completed',
        trials: 1,
      },
      'p',
    );
  const records = (events: readonly PasskEvent[]) => events.map((event, offset) => ({ offset, event }));

  it('snapshots leave an evicted key`s runs out and name it; a restore marks it evicted and keeps the clock', () => {
    const runs = [closedRun('a', 'run-a-0', T0 + 2), closedRun('b', 'run-b-0', T0 + 1), closedRun('a', 'run-a-1', T0)];
    const prefix = emptyPrefix();
    foldPrefix(prefix, records(runs.slice(0, 2)), 1);
    evictPrefixClosed(prefix, [candidateKey(SUITE, 'a')]);
    // a later run of an evicted key is not kept either
    foldPrefix(prefix, [{ offset: 2, event: runs[2]! }], 2);
    const whole = toGateBookSnapshot(prefix, 0, 1, 'p');
    expect(whole.closed).toEqual([runs[1]]);
    expect(whole.closed_evicted).toEqual([candidateKey(SUITE, 'a')]);
    expect(whole.closed_at).toBe(T0 + 2);
    // chunked (one entry a chunk) and joined again: the same snapshot
    const chunks = chunkSnapshot(whole, JSON.stringify(whole).length - 1, 'a');
    expect(chunks.length).toBeGreaterThan(1);
    const joined = joinChunks(chunks);
    expect(joined.closed).toEqual(whole.closed);
    expect(joined.closed_evicted).toEqual(whole.closed_evicted);
    const restored = restorePrefix(joined);
    expect([...restored.closedEvicted]).toEqual([candidateKey(SUITE, 'a')]);
    expect(restored.closedAt).toBe(T0 + 2);
    const store = createGateStore();
    applyClosed(store, [joined]);
    expect([...store.closedEvicted]).toEqual([candidateKey(SUITE, 'a')]);
    expect([...store.closed.keys()]).toEqual([candidateKey(SUITE, 'b')]);
    expect(store.closedAt).toBe(T0 + 2);
    // the tail's run of an evicted key is not kept: only a reload brings the key back, whole
    addClosed(store, runs[0]!);
    expect(store.view.closed(SUITE, 'a')).toEqual([]);
  });

  it('evicts a key with its rows, reloads it in the same reload as the rows, and a cut-short read reloads neither', async () => {
    const store = createGateStore();
    const table = new Map<string, StreamRowState>();
    const states = foldTrials(table, [
      trial({
        suite: SUITE,
        dataset_version: DV,
        row: 'r0',
        version: 'a',
        run: 'run-a-0',
        attempt: 0,
        passed: true,
        output: 'x',
        at: T0,
      }),
    ]).map((ch) => toRowStateChanged(ch.after, 'p'));
    applyRowstate(store, states, { versions: new Set(), windows: new Set() });
    const run = closedRun('a', 'run-a-0', T0);
    addClosed(store, run);
    evictRows(store, { all: true, closed: true });
    expect([...store.closedEvicted]).toEqual([candidateKey(SUITE, 'a')]);
    expect(store.closed.size).toBe(0);
    declare(store, 'a', 'b');
    const closed = { pinned: closedPinnedBy(store), reload: async () => undefined };
    expect((await reloadPinned(store, async () => states, undefined, closed)).size).toBe(0);
    expect(store.rows.size).toBe(0);
    expect(store.closedEvicted.size).toBe(1);
    const asked: string[] = [];
    await reloadPinned(store, async () => states, undefined, {
      pinned: closedPinnedBy(store),
      reload: async (keys) => {
        asked.push(...keys);
        return [run];
      },
    });
    expect(asked).toEqual([candidateKey(SUITE, 'a')]);
    expect(store.view.closed(SUITE, 'a')).toEqual([run]);
    expect(store.view.rows(SUITE, DV, 'a').size).toBe(1);
    expect(store.closedEvicted.size).toBe(0);
  });
});
