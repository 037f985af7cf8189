import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyPrefix,
  foldPrefix,
  heldIds,
  prunePrefix,
  restorePrefix,
  toGateBookSnapshot,
  usableSnapshot,
  type DecisionsPrefix,
} from '../../processors/folds/gateSnapshot.ts';
import {
  decideComparison,
  emptyBook,
  foldBookInto,
  processorsFold,
  pruneBook,
  type DecisionEvent,
  type GateView,
} from '../../processors/folds/gates.ts';
import { addClosed, createGateStore, decideOpen, pruneStore } from '../../processors/operators/decideGates.ts';
import { versionKeyOf } from '../../processors/folds/versionSummary.ts';
import { PasskConfig } from '../../deploy/config.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { candidateKey } from '../../schemas/topics.ts';
import {
  batchesAndPoints,
  decisionEvents,
  foldBatched,
  prefixContent,
  throughTheLog,
  type Rec,
} from '../helpers/decisionStream.ts';
import { comparison, runOf } from '../helpers/feedbackLoop.ts';
import { evolveRow, type StreamRowState } from '../../processors/folds/rowState.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { RunClosed } from '../../schemas/events/comparisons.ts';

/**
 * Issue 26, item 6: the gates' horizon. Decided ids, verdict ids, alerts and adaptive runs older than the horizon
 * (event time, against the latest decision event), and closed runs older than the newest closed run by it, are
 * dropped from the book and its snapshots; what a fold reads hides them already, so a snapshot pruned at any point
 * and the records after it fold to the full replay's book, and the book holds what the horizon holds, not history.
 */
const T = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

/** What a prefix holds once pruned (pruning changes no read: both sides are compared pruned). */
const content = (s: DecisionsPrefix) => {
  prunePrefix(s);
  return prefixContent(s);
};

describe('the gates’ horizon', () => {
  it('restores a snapshot with the records after it to the full replay, however old the events and where it was cut', () => {
    const H = 40;
    // a step: time moves on by `dt`; comparison k's next event (a re-declaration once all six are out), or (one in
    // four) a redelivery
    const step = fc.tuple(fc.nat(3), fc.nat(3), fc.nat(1_000), fc.nat(25));
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 10, maxLength: 150 }),
        ...batchesAndPoints,
        (steps, before, after, cut, commit) => {
          const next = [0, 0, 0, 0];
          const stream: DecisionEvent[] = [];
          let now = T;
          for (const [k, again, j, dt] of steps) {
            now += dt;
            if (again === 0 && stream.length > 0) stream.push(stream[j % stream.length]!);
            else if (next[k]! < 6) stream.push(decisionEvents(k, now)[next[k]!++]!);
            else stream.push(decisionEvents(k, now)[0]!); // declared again, later
          }
          const records: Rec[] = stream.map((event, offset) => ({ offset, event }));
          const full = foldBatched(emptyPrefix(H), records, [records.length]);

          const at = cut % (records.length + 1);
          const prefix = foldBatched(emptyPrefix(H), records.slice(0, at), before);
          const snapshot = throughTheLog(toGateBookSnapshot(prefix, 2, 4, 'test'));
          expect(usableSnapshot(snapshot, 4, at, H)).toBe(snapshot);
          const restored = restorePrefix(snapshot, H);
          foldBatched(restored, records.slice(at), after);
          expect(content(restored)).toEqual(content(full));

          // the consumer delivers again from its committed offset, which may lie before the snapshot's
          foldBatched(restored, records.slice(commit % (records.length + 1)), after);
          expect(content(restored)).toEqual(content(full));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds what the horizon holds over a long stream, never the history', () => {
    // one comparison a day for 1,000 days, with its six events and a redelivery of an old verdict
    // the most ids held right after a snapshot (which prunes) and at any day's end between them
    const bound = (horizonDays: number) => {
      const s = emptyPrefix(horizonDays * DAY);
      let offset = 0;
      let snapshotted = 0;
      let between = 0;
      for (let day = 0; day < 1_000; day++) {
        const events = decisionEvents(day, T + day * DAY);
        const redelivered = decisionEvents(Math.floor(day / 2), T + Math.floor(day / 2) * DAY)[3]!;
        const batch = [...events, redelivered].map((event) => ({ offset: offset++, event }));
        foldPrefix(s, batch, offset - 1);
        between = Math.max(between, heldIds(s));
        if (day % 100 === 99) {
          toGateBookSnapshot(s, 0, 1, 'test'); // prunes, as every snapshot does
          snapshotted = Math.max(snapshotted, heldIds(s));
        }
      }
      return { snapshotted, between };
    };
    // 30 days: a snapshot holds 31 days of decided ids, verdict ids, adaptive runs and closed runs (4 a day) and
    // the four alerts, as after the first 31 days; pruned every PRUNE_EVERY (1,000) records, 7 a day, memory
    // between snapshots never holds more than 31 + 1,000 / 7 days of them
    const within = bound(30);
    expect(within.snapshotted).toBe(31 * 4 + 4);
    expect(within.between).toBeGreaterThan(within.snapshotted);
    expect(within.between).toBeLessThanOrEqual(Math.ceil(31 + 1_000 / 7) * 4 + 4);
    // without a horizon the same stream keeps every decided id, verdict and closed run
    expect(bound(0).snapshotted).toBeGreaterThanOrEqual(1_000 * 3);
  });

  it('decides a comparison declared again past the horizon once more; within it, the first declaration holds', () => {
    const H = 10 * DAY;
    const o = processorsFold(H);
    const book = emptyBook();
    const declared = (at: number) =>
      comparison('c1', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3, occurred_at: at });
    const trials = [...runOf('base', 'd1', ['r1', 'r2', 'r3']), ...runOf('cand', 'd1', ['r1', 'r2', 'r3'])];
    const rows = new Map<string, Map<string, StreamRowState>>();
    for (const t of trials as TrialRecorded[]) {
      const key = `${t.suite}|${t.dataset_version}|${t.agent.version}`;
      const table = rows.get(key) ?? new Map<string, StreamRowState>();
      rows.set(key, table);
      table.set(t.row_id, evolveRow(table.get(t.row_id), t));
    }
    const view: GateView = {
      rows: (s, d, a) => rows.get(`${s}|${d}|${a}`) ?? new Map(),
      dataset: () => undefined,
      closed: () => [],
    };
    const decide = () =>
      decideComparison(book, book.comparisons.c1!, view, { producer: 'p', horizonMs: H }) as GateEvaluated[];

    expect(foldBookInto(book, declared(T), o)).toBe(true);
    const [first] = decide();
    expect(first).toMatchObject({ type: 'GateEvaluated', gate_id: 'c1' });
    foldBookInto(book, first!, o);
    expect(book.decided).toEqual({ c1: first!.occurred_at });
    // declared again within the horizon: the first declaration holds, nothing decides again
    expect(foldBookInto(book, declared(first!.occurred_at + H - 1), o)).toBe(false);
    expect(book.comparisons.c1).toBeUndefined();
    // past it: open again, decided again, and the old verdict is past the horizon too (not flagged a repeat)
    const later = first!.occurred_at + 3 * H;
    expect(foldBookInto(book, declared(later), o)).toBe(true);
    expect(book.comparisons.c1?.status).toBe('open');
    const [again] = decide();
    expect(again).toMatchObject({ type: 'GateEvaluated', gate_id: 'c1', occurred_at: later });
    expect(again!.repeated_verdict).toBeUndefined();
    // an old verdict delivered again past the horizon adds nothing to remember
    foldBookInto(book, again!, o);
    expect(foldBookInto(book, first!, o)).toBe(false);
    expect(book.verdicts['refunds␟cand'] ?? Object.values(book.verdicts)[0]).toEqual([again!.event_id]);
  });

  it('drops a closed run once runs closed a horizon after it, whatever was declared since', () => {
    const H = 10 * DAY;
    const store = createGateStore({ horizonMs: H });
    const run = (id: string, at: number): RunClosed => ({
      event_id: deterministicEventId(at, 'RunClosed', id),
      type: 'RunClosed',
      schema_version: 1,
      occurred_at: at,
      producer: 'p',
      run_id: id,
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: 'base',
      status: 'completed',
      trials: 3,
      source_event_id: deterministicEventId(at, 'RunFinished', id),
    });
    addClosed(store, run('old', T));
    addClosed(store, run('mid', T + H / 2));
    expect(store.view.closed('refunds', 'base').map((r) => r.run_id)).toEqual(['old', 'mid']);
    addClosed(store, run('new', T + H + 1));
    expect(store.view.closed('refunds', 'base').map((r) => r.run_id)).toEqual(['mid', 'new']);
    pruneStore(store);
    expect([...store.closed.values()].flatMap((runs) => [...runs.keys()]).length).toBe(2);
    // a run closed before the horizon and delivered late is not kept
    addClosed(store, run('late', T));
    expect(store.view.closed('refunds', 'base').map((r) => r.run_id)).toEqual(['mid', 'new']);
  });

  it('as shipped, decides a gate on imported results however old the baseline; a horizon would leave it waiting', () => {
    // passk import dates a run by its trials: v1's results are 200 days older than v2's, no dataset is published
    const decidedWith = (horizonMs: number, idHorizonMs = 0) => {
      const store = createGateStore({ horizonMs, idHorizonMs });
      const rows = (v: string, at: number) => {
        const table = new Map<string, StreamRowState>();
        for (const t of runOf(v, 'd1', ['r1', 'r2'], { k: 1 }) as TrialRecorded[])
          table.set(t.row_id, evolveRow(table.get(t.row_id), { ...t, occurred_at: at }));
        store.rows.set(versionKeyOf({ suite: 'refunds', dataset_version: 'd1', agent_version: v }), table);
      };
      const closed = (v: string, at: number): RunClosed => ({
        event_id: deterministicEventId(at, 'RunClosed', v),
        type: 'RunClosed',
        schema_version: 1,
        occurred_at: at,
        producer: 'p',
        run_id: `run-${v}`,
        suite: 'refunds',
        dataset_version: 'd1',
        agent_version: v,
        status: 'completed',
        trials: 2,
        source_event_id: deterministicEventId(at, 'RunFinished', v),
      });
      rows('v1', T - 200 * DAY);
      rows('v2', T);
      addClosed(store, closed('v1', T - 200 * DAY));
      addClosed(store, closed('v2', T));
      const book = emptyBook();
      const d = comparison('c1', 'd1', 'v1', 'v2', { dataset_id: undefined, confirmation_attempts: 0, occurred_at: T });
      foldBookInto(book, d, processorsFold(horizonMs, false, idHorizonMs));
      store.books.set(0, book);
      return decideOpen(store, 'all', 'p').map((e) => e.type);
    };
    const shipped = PasskConfig.parse({}).gateHorizonDays;
    expect(decidedWith(shipped * DAY)).toEqual(['GateEvaluated']);
    // why the horizon is off by default (docs/reliability.md): under 90 days v1's run is past it, v1 never completes
    expect(decidedWith(90 * DAY)).toEqual([]);
    // Kafka's gates keep decided ids, bounded as shipped by the ids horizon: on the declarations' clock, it drops no
    // closed run, so the same gate decides; the same days as an event-time horizon would leave it waiting
    const ids = PasskConfig.parse({}).gateIdHorizonDays;
    expect(ids).toBeGreaterThan(0);
    expect(decidedWith(0, ids * DAY)).toEqual(['GateEvaluated']);
    expect(decidedWith(ids * DAY)).toEqual([]);
  });

  it('under the ids horizon, forgets a decided id once a comparison is declared a horizon after its verdict, and nothing else', () => {
    const H = 7 * DAY;
    const o = processorsFold(0, false, H);
    const book = emptyBook();
    // c1 on imported results: its trials and closed runs 200 days old, declared (and so decided) today
    const first = decisionEvents(1, T);
    const d1 = first[0]!;
    const v1 = first[3]!;
    const old = T - 200 * DAY;
    const closed: DecisionEvent = {
      event_id: deterministicEventId(old, 'RunClosed', 'v1'),
      type: 'RunClosed',
      schema_version: 1,
      occurred_at: old,
      producer: 'p',
      run_id: 'run-v1',
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: 'v1',
      status: 'completed',
      trials: 2,
      source_event_id: deterministicEventId(old, 'RunFinished', 'v1'),
    };
    for (const e of [closed, ...first]) foldBookInto(book, e, o);
    expect(book.decided?.c1).toBe(v1.occurred_at);
    // the clock is the declarations': neither an old run nor a run dated in the future moves it
    expect(book.at).toBe(d1.occurred_at);
    foldBookInto(book, { ...closed, event_id: 'future', occurred_at: T + 365 * DAY }, o);
    expect(book.at).toBe(d1.occurred_at);
    // declared again within the horizon: a duplicate
    expect(foldBookInto(book, { ...d1, event_id: 'again', occurred_at: T + 6 * DAY }, o)).toBe(false);
    // a comparison declared on the partition a horizon later: c1's ids are past it, and pruned
    const [d2] = decisionEvents(2, T + 8 * DAY);
    foldBookInto(book, d2!, o);
    pruneBook(book, 0, H);
    expect(book.decided?.c1).toBeUndefined();
    expect(Object.values(book.verdicts).flat()).not.toContain(v1.event_id);
    // the alert and the adaptive run stay (an ids horizon drops ids only)
    expect(Object.keys(book.alerts)).toEqual(['alert-1']);
    expect(Object.keys(book.adaptive?.[candidateKey('refunds', 'cand1')] ?? {})).toEqual(['adaptive-1']);
    // c1 declared again now decides again (the allowed change); the open comparison stays whatever its age
    expect(foldBookInto(book, { ...d1, event_id: 'late', occurred_at: T + 9 * DAY }, o)).toBe(true);
    expect(Object.keys(book.comparisons).sort()).toEqual(['c1', 'c2']);
  });

  it('restores only from a snapshot pruned with a horizon at least as long', () => {
    const s = foldBatched(
      emptyPrefix(30 * DAY),
      decisionEvents(1, T).map((event, offset) => ({ offset, event })),
      [6],
    );
    const x = throughTheLog(toGateBookSnapshot(s, 0, 4, 'test'));
    expect(usableSnapshot(x, 4, 6, 30 * DAY)).toBe(x);
    expect(usableSnapshot(x, 4, 6, 10 * DAY)).toBe(x);
    expect(usableSnapshot(x, 4, 6, 60 * DAY)).toBeUndefined();
    expect(usableSnapshot(x, 4, 6, 0)).toBeUndefined(); // no horizon keeps what it dropped: replayed from 0
    const before = { ...x, schema_version: 1, horizon_ms: undefined };
    expect(usableSnapshot(before, 4, 6, 0)).toBe(before);
    expect(usableSnapshot(before, 4, 6, 30 * DAY)).toBeUndefined();
  });

  it('restores under the ids horizon only from a snapshot pruned with an ids horizon at least as long', () => {
    const records = decisionEvents(1, T).map((event, offset) => ({ offset, event }));
    const under = (idHorizonMs: number) =>
      throughTheLog(toGateBookSnapshot(foldBatched(emptyPrefix(0, false, idHorizonMs), records, [6]), 0, 4, 'test'));
    const x = under(7 * DAY);
    expect(x.id_horizon_ms).toBe(7 * DAY);
    expect(x.horizon_ms).toBe(0);
    expect(usableSnapshot(x, 4, 6, 0, false, 7 * DAY)).toBe(x);
    expect(usableSnapshot(x, 4, 6, 0, false, 3 * DAY)).toBe(x);
    expect(usableSnapshot(x, 4, 6, 0, false, 30 * DAY)).toBeUndefined();
    // ids kept for ever, or under the horizon (another clock): the partition is replayed from 0
    expect(usableSnapshot(x, 4, 6, 0, false, 0)).toBeUndefined();
    expect(usableSnapshot(x, 4, 6, 7 * DAY, false, 7 * DAY)).toBeUndefined();
    // and one that kept every id (no time on them) serves no ids horizon; the embedded log's (forgetting) ignores it
    const kept = under(0);
    expect(kept.id_horizon_ms).toBeUndefined();
    expect(usableSnapshot(kept, 4, 6, 0, false, 7 * DAY)).toBeUndefined();
    expect(usableSnapshot(kept, 4, 6, 0, false, 0)).toBe(kept);
    const forgot = throughTheLog(
      toGateBookSnapshot(foldBatched(emptyPrefix(0, true, 7 * DAY), records, [6]), 0, 4, 'test'),
    );
    expect(forgot.id_horizon_ms).toBeUndefined();
    expect(usableSnapshot(forgot, 4, 6, 0, true, 7 * DAY)).toBe(forgot);
  });

  it('does not restore under a horizon from a snapshot folded without one (its entries carry no event time)', () => {
    const H = 30 * DAY;
    // comparison 1 decided, then declared again a day later: within the horizon, the first declaration holds
    const records: Rec[] = [...decisionEvents(1, T), decisionEvents(1, T + DAY)[0]!].map((event, offset) => ({
      offset,
      event,
    }));
    const full = foldBatched(emptyPrefix(H), records, [records.length]);
    expect(full.book.comparisons.c1).toBeUndefined();
    // the same six records folded with no horizon (the deployment before PASSK_GATE_HORIZON_DAYS was set)
    const x = throughTheLog(toGateBookSnapshot(foldBatched(emptyPrefix(0), records.slice(0, 6), [6]), 0, 4, 'test'));
    expect(x.horizon_ms).toBe(0);
    // restored as it is, its decided id has no time and counts as past: the re-declaration would decide again
    const stale = foldBatched(restorePrefix(x, H), records.slice(6), [1]);
    expect(stale.book.comparisons.c1?.status).toBe('open');
    // so it is not used: the partition is replayed from 0, to the full replay's book
    expect(usableSnapshot(x, 4, 6, H)).toBeUndefined();
    expect(usableSnapshot(x, 4, 6, 0)).toBe(x);
    const replayed = foldBatched(restorePrefix(usableSnapshot(x, 4, 6, H), H), records, [records.length]);
    expect(content(replayed)).toEqual(content(full));
  });
});

/** A window alert raised for the window ending at `end` (its event time), as decideWindows folds it. */
const alertAt = (id: string, end: number): DecisionEvent =>
  ({
    event_id: id,
    type: 'WindowAlertRaised',
    schema_version: 1,
    occurred_at: end,
    producer: 'p',
    alert_id: id,
  }) as unknown as DecisionEvent;

describe('the alerts horizon', () => {
  const H = 7 * DAY;
  const daily = (n: number) => Array.from({ length: n }, (_, d) => alertAt(`alert-d${d}`, T + d * DAY));

  it('holds only the alerts within the horizon of the latest alert, on both backends, however many were raised', () => {
    for (const forget of [false, true]) {
      const held = (n: number) => {
        const records: Rec[] = daily(n).map((event, offset) => ({ offset, event }));
        // declarations at their own pace (the ids horizon's clock) do not move the alerts' clock
        records.push({ offset: n, event: decisionEvents(1, T - 400 * DAY)[0]! });
        const snapshot = throughTheLog(
          toGateBookSnapshot(foldBatched(emptyPrefix(0, forget, H), records, [5]), 0, 1, 'test'),
        );
        return Object.keys(snapshot.book.alerts).sort();
      };
      // one alert a day for 100 days: the last 8 (days 92..99: not older than day 99 minus 7 days)
      const want = Array.from({ length: 8 }, (_, i) => `alert-d${92 + i}`).sort();
      expect(held(100)).toEqual(want);
      expect(held(1_000)).toHaveLength(8);
      // the live book too (its own fold, pruned like the store's)
      const o = processorsFold(0, forget, H);
      const book = emptyBook();
      for (const e of daily(100)) foldBookInto(book, e, o);
      pruneBook(book, 0, forget ? 0 : H, H);
      expect(Object.keys(book.alerts).sort()).toEqual(want);
      expect(book.alerts_at).toBe(T + 99 * DAY);
    }
    // a store as `passk process` makes it, from the shipped config: the alerts horizon is on, on both backends
    const days = PasskConfig.parse({}).gateIdHorizonDays;
    for (const forgetDecided of [false, true])
      expect(createGateStore({ forgetDecided, idHorizonMs: days * DAY }).alertHorizonMs).toBe(days * DAY);
    // a horizon covers alerts on its own clock; none at all keeps them
    expect(createGateStore({ horizonMs: 30 * DAY, idHorizonMs: H }).alertHorizonMs).toBe(0);
    expect(createGateStore().alertHorizonMs).toBe(0);
  });

  it('ignores a re-delivered alert within the horizon, and one past it adds nothing (its window is never final again)', () => {
    const o = processorsFold(0, true, H);
    const book = emptyBook();
    for (const e of daily(30)) expect(foldBookInto(book, e, o)).toBe(true);
    // re-delivered within the horizon: a duplicate, before and after a prune
    expect(foldBookInto(book, alertAt('alert-d25', T + 25 * DAY), o)).toBe(false);
    pruneBook(book, 0, 0, H);
    expect(foldBookInto(book, alertAt('alert-d23', T + 23 * DAY), o)).toBe(false);
    expect(foldBookInto(book, alertAt('alert-d29', T + 29 * DAY), o)).toBe(false);
    // past it (pruned or not): not raised again, and no id comes back
    expect(book.alerts['alert-d3']).toBeUndefined();
    expect(foldBookInto(book, alertAt('alert-d3', T + 3 * DAY), o)).toBe(false);
    expect(book.alerts['alert-d3']).toBeUndefined();
    // a new alert within the horizon is raised, and moves the clock
    expect(foldBookInto(book, alertAt('alert-new', T + 31 * DAY), o)).toBe(true);
    expect(book.alerts_at).toBe(T + 31 * DAY);
    expect(foldBookInto(book, alertAt('alert-new', T + 31 * DAY), o)).toBe(false);
  });

  it('restores only from a snapshot whose alerts were dated with an alerts horizon at least as long', () => {
    const records: Rec[] = daily(3).map((event, offset) => ({ offset, event }));
    const under = (forget: boolean, idHorizonMs: number) =>
      throughTheLog(toGateBookSnapshot(foldBatched(emptyPrefix(0, forget, idHorizonMs), records, [3]), 0, 4, 'test'));
    for (const forget of [false, true]) {
      const x = under(forget, H);
      expect(x.alert_horizon_ms).toBe(H);
      expect(Object.values(x.book.alerts).every((t) => typeof t === 'number')).toBe(true);
      expect(usableSnapshot(x, 4, 3, 0, forget, H)).toBe(x);
      expect(usableSnapshot(x, 4, 3, 0, forget, 3 * DAY)).toBe(x);
      expect(usableSnapshot(x, 4, 3, 0, forget, 30 * DAY)).toBeUndefined();
      expect(usableSnapshot(x, 4, 3, 0, forget, 0)).toBeUndefined();
      // one from before the alerts horizon (undated alerts: `true`) is not used under it: replayed from 0, once
      const before = { ...x, alert_horizon_ms: undefined, book: { ...x.book, alerts: { 'alert-d0': true as const } } };
      expect(usableSnapshot(before, 4, 3, 0, forget, H)).toBeUndefined();
      // (the embedded log's from before: no horizon of any kind, so it serves a restore with none)
      if (forget) expect(usableSnapshot(before, 4, 3, 0, forget, 0)).toBe(before);
    }
  });
});
