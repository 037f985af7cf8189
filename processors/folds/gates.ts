import type { AdaptiveRoundDecided } from '../../schemas/events/adaptive.ts';
import type { RunClosed } from '../../schemas/events/comparisons.ts';
import {
  requestedAttempts,
  type ComparisonDeclared,
  type ConfirmationRequested,
} from '../../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { WindowAlertRaised } from '../../schemas/events/windowAlertRaised.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { candidateKey } from '../../schemas/topics.ts';
import { compareVersions } from '../core/compare.ts';
import { evaluateGate, type GateVerdict } from '../core/gate.ts';
import { MUST_NOT_BREAK_TAG } from '../core/mustNotBreak.ts';
import type { PairInput } from '../core/pairing.ts';
import { DEFAULT_REPORT_OPTIONS } from '../core/report.ts';
import { isAdaptiveRunId, isConfirmationRun } from '../core/screening.ts';
import { mustNotBreakAt, rowsAt, type DatasetState } from '../core/datasets.ts';
import { maxOf } from '../core/arrays.ts';
import { DEFAULT_SEQUENTIAL_GATE, sequentialGate, type GateRowInput } from '../core/sequentialGate.ts';
import type { StreamRowState } from './rowState.ts';

/**
 * Live gates, as a fold of passk.decisions (keyed by suite + candidate, so one owner per candidate)
 * plus a pure decision step over the row states and datasets it can see:
 *   open ─(candidate and baseline complete)─▶ suspected regressions? ─yes─▶ ConfirmationRequested ─▶ confirming
 *        └──────────────────────────────no──▶ GateEvaluated ◀─(confirmation attempts recorded)───────┘
 * Complete = every row of the dataset version (known from passk.datasets, or by the declared row
 * count) has the required graded attempts, or the version's RunClosed on that dataset version are
 * fully reflected in its rows. Row states arrive row by row, so without one of these a gate could not
 * tell a finished run from one still arriving. A RunClosed is keyed by its own version, so it may sit
 * on another partition than the comparison: the gates see closed runs as a global table (the view),
 * never through the book, and a decision does not depend on where its events landed. Decided events are applied at once
 * and their echoes from the log are duplicates. A second verdict on the same candidate (another
 * comparison) is flagged `repeated_verdict`: re-running to get another verdict is visible.
 */
export { ComparisonState, GateBook } from '../../schemas/events/gateBookSnapshot.ts';
import type { ComparisonState, GateBook } from '../../schemas/events/gateBookSnapshot.ts';
export type DecisionEvent =
  ComparisonDeclared | ConfirmationRequested | GateEvaluated | RunClosed | WindowAlertRaised | AdaptiveRoundDecided;

/** Whether an event of passk.decisions is one the gate book folds. */
export const isDecision = (e: PasskEvent): e is DecisionEvent =>
  e.type === 'ComparisonDeclared' ||
  e.type === 'ConfirmationRequested' ||
  e.type === 'GateEvaluated' ||
  e.type === 'RunClosed' ||
  e.type === 'WindowAlertRaised' ||
  e.type === 'AdaptiveRoundDecided';

export const emptyBook = (): GateBook => ({ comparisons: {}, verdicts: {}, alerts: {} });

export interface FoldOptions {
  /**
   * A decided comparison leaves `comparisons` for `decided` (its id only): its declaration, confirmation request
   * and verdict (about 34 KB with 50 evidence rows) are not kept, and the decision step no longer walks it. The
   * processors' books evict; `gate --status` keeps them, to print the verdicts.
   */
  readonly evictDecided?: boolean;
  /**
   * The horizon, in ms of event time (0 or absent: none). Decided ids, verdict ids, alerts and adaptive runs whose
   * event time lies more than this before the book's clock (`at`, the latest event time folded) are as if absent,
   * and `pruneBook` drops them; an event already past it adds none. Open comparisons are never dropped.
   */
  readonly horizonMs?: number;
  /**
   * Decided comparisons leave no id behind, and verdict ids are kept only for the candidates whose key the caller
   * loaded (`verdicts[key]` present): both stay in the log, where the gates look them up by key before they decide
   * (`checkDecided`, on the embedded log's index by key: docs/processors.md, "Decided ids stay in the log"). A
   * re-declaration of a decided comparison is then folded as open, and the look-up drops it. With `evictDecided` and
   * no horizon only.
   */
  readonly forgetDecided?: boolean;
  /**
   * The horizon of duplicate ids only (`PASSK_GATE_ID_HORIZON_DAYS`, the default where the gates keep decided ids:
   * Kafka), in ms: a decided comparison's id and its verdict's id are forgotten once a comparison was declared on the
   * partition this long after the verdict's event time. Its clock (`at`) is the latest declaration's event time (when
   * `gate --declare` published it), not that of trials or closed runs, and nothing else is dropped: closed runs,
   * adaptive runs and open comparisons stay (alerts have their own clock: `alertHorizonMs`), so a gate on an old
   * imported baseline still decides. Without
   * `horizonMs` (which covers the ids already) and `forgetDecided` (which holds none) only.
   */
  readonly idHorizonMs?: number;
  /**
   * The alerts horizon, in ms (`PASSK_GATE_ID_HORIZON_DAYS`, on both backends; without `horizonMs`, which covers
   * alerts already): an alert id is forgotten once an alert was raised on the partition this long after it. Its
   * clock (`alerts_at`) is the latest alert's event time (its window's end), not the declarations'. A window older
   * than the newest alerted one by more than the longest production window is never final again (its shares are
   * dropped: folds/windows.ts, `horizonOf`), so it cannot be raised again once its id is gone; an alert already past
   * the horizon adds none.
   */
  readonly alertHorizonMs?: number;
}

/** The processors' fold: decided comparisons evicted. */
export const EVICT_DECIDED: FoldOptions = { evictDecided: true };

/**
 * The processors' fold with a horizon (`PASSK_GATE_HORIZON_DAYS`), forgetting decided ids (`forgetDecided`: the gates
 * look them up in the log) when asked and without a horizon.
 */
export const processorsFold = (
  horizonMs = 0,
  forgetDecided = false,
  idHorizonMs = 0,
  alertHorizonMs = alertsHorizon(horizonMs, idHorizonMs),
): FoldOptions => {
  const ids = idsHorizon(horizonMs, forgetDecided, idHorizonMs);
  return {
    evictDecided: true,
    horizonMs,
    ...(forgetDecided && horizonMs <= 0 ? { forgetDecided: true } : {}),
    ...(ids > 0 && horizonMs <= 0 ? { idHorizonMs: ids } : {}),
    ...(alertHorizonMs > 0 && horizonMs <= 0 ? { alertHorizonMs } : {}),
  };
};

/**
 * The alerts horizon a book folds with, given the ids horizon's ms (`PASSK_GATE_ID_HORIZON_DAYS`): that, on both
 * backends (whether decided ids are kept or looked up in the log), unless a horizon covers alerts on its own clock.
 */
export const alertsHorizon = (horizonMs = 0, idHorizonMs = 0): number => (horizonMs > 0 ? 0 : Math.max(0, idHorizonMs));

/**
 * The horizon of decided and verdict ids a book folds with: the horizon when there is one (it covers them, on its own
 * clock), else none when they are looked up in the log (`forgetDecided`), else the ids horizon (0: kept for ever).
 */
export const idsHorizon = (horizonMs = 0, forgetDecided = false, idHorizonMs = 0): number =>
  horizonMs > 0 ? horizonMs : forgetDecided ? 0 : Math.max(0, idHorizonMs);

/**
 * Whether an entry made at event time `t` is past the book's horizon. Checked where an entry is read, so a book
 * pruned at any moment (a snapshot) folds on exactly as one never pruned: replay stays deterministic.
 */
export const pastHorizon = (clock: number | undefined, t: number | true | undefined, horizonMs = 0): boolean =>
  horizonMs > 0 && t !== undefined && (t === true ? 0 : t) < (clock ?? 0) - horizonMs;

/** The verdict ids of a candidate within the horizon, with their event times (`at` is empty without a horizon). */
const liveVerdicts = (b: GateBook, key: string, horizonMs = 0): { ids: string[]; at: number[] } => {
  const ids = b.verdicts[key] ?? [];
  if (horizonMs <= 0) return { ids, at: [] };
  const times = b.verdicts_at?.[key] ?? [];
  const live = ids.flatMap((_, i) => (pastHorizon(b.at, times[i] ?? 0, horizonMs) ? [] : [i]));
  return { ids: live.map((i) => ids[i]!), at: live.map((i) => times[i] ?? 0) };
};

/** The verdict ids of a candidate within the horizon. */
export const verdictsOf = (b: GateBook, key: string, horizonMs = 0): readonly string[] =>
  liveVerdicts(b, key, horizonMs).ids;

/** A candidate's adaptive runs within the horizon. */
export const adaptiveOf = (
  b: GateBook,
  key: string,
  horizonMs = 0,
): Record<string, { dataset_version: string; max_k: number; at?: number | undefined }> => {
  const runs = b.adaptive?.[key] ?? {};
  if (horizonMs <= 0) return runs;
  return Object.fromEntries(Object.entries(runs).filter(([, r]) => !pastHorizon(b.at, r.at ?? 0, horizonMs)));
};

/**
 * Folds one event of passk.decisions into a book the caller owns, in place; false when it changes nothing.
 * Every event is idempotent by its own key (a comparison id, a verdict's event id among its candidate's
 * few, an alert id), so a redelivery changes nothing without a list of every event id ever seen, and no
 * event copies the book: the cost of an event does not grow with the events before it.
 */
export const foldBookInto = (b: GateBook, e: DecisionEvent, o: FoldOptions = {}): boolean => {
  const h = o.horizonMs ?? 0;
  // decided and verdict ids: under the horizon, or the ids horizon, whose clock only declarations move
  const hi = h > 0 ? h : o.forgetDecided ? 0 : (o.idHorizonMs ?? 0);
  if (h > 0 || (hi > 0 && e.type === 'ComparisonDeclared')) b.at = Math.max(b.at ?? 0, e.occurred_at);
  const history = pastHorizon(b.at, e.occurred_at, h); // an event past the horizon adds no id to remember
  switch (e.type) {
    case 'ComparisonDeclared': {
      // the first declaration of an id holds, decided (and evicted) or not, within the horizon; past it, it decides again
      const decided = b.decided?.[e.comparison_id];
      if (b.comparisons[e.comparison_id] || (decided !== undefined && !pastHorizon(b.at, decided, hi))) return false;
      if (decided !== undefined) delete b.decided![e.comparison_id];
      b.comparisons[e.comparison_id] = { declared: e, status: 'open' };
      return true;
    }
    case 'ConfirmationRequested': {
      const c = b.comparisons[e.comparison_id];
      if (!c || c.status !== 'open') return false;
      b.comparisons[e.comparison_id] = { ...c, status: 'confirming', confirmation: e };
      return true;
    }
    case 'GateEvaluated': {
      const key = candidateKey(e.suite, e.candidate);
      if (o.forgetDecided) {
        // the log keeps the verdict: only a candidate whose verdicts are loaded (an open comparison names it) notes it
        const loaded = b.verdicts[key];
        const noted = loaded !== undefined && !loaded.includes(e.event_id);
        if (noted) b.verdicts[key] = [...loaded, e.event_id];
        if (!b.comparisons[e.gate_id]) return noted;
        delete b.comparisons[e.gate_id];
        return true;
      }
      const verdicts = liveVerdicts(b, key, hi);
      if (verdicts.ids.includes(e.event_id)) return false;
      const c = b.comparisons[e.gate_id];
      const open = c !== undefined && c.status !== 'decided';
      const idHistory = pastHorizon(b.at, e.occurred_at, hi);
      if (idHistory && !open) return false;
      if (!idHistory) {
        b.verdicts[key] = [...verdicts.ids, e.event_id];
        if (hi > 0) (b.verdicts_at ??= {})[key] = [...verdicts.at, e.occurred_at];
      }
      if (open) {
        if (o.evictDecided) {
          delete b.comparisons[e.gate_id];
          (b.decided ??= {})[e.gate_id] = hi > 0 ? e.occurred_at : true;
        } else b.comparisons[e.gate_id] = { ...c, status: 'decided', verdict: e };
      }
      return true;
    }
    case 'RunClosed': // a global fact: the view's closed runs, whichever partition holds it
      return false;
    case 'WindowAlertRaised': {
      if (h > 0) {
        const known = b.alerts[e.alert_id];
        if (history || (known !== undefined && !pastHorizon(b.at, known, h))) return false;
        b.alerts[e.alert_id] = e.occurred_at;
        return true;
      }
      // the alerts horizon: its own clock, the latest alert's event time, moved by alerts alone
      const ha = o.alertHorizonMs ?? 0;
      if (ha > 0) b.alerts_at = Math.max(b.alerts_at ?? 0, e.occurred_at);
      const known = b.alerts[e.alert_id];
      if (pastHorizon(b.alerts_at, e.occurred_at, ha)) return false; // too old to be raised again: adds no id
      if (known !== undefined && !pastHorizon(b.alerts_at, known, ha)) return false;
      b.alerts[e.alert_id] = ha > 0 ? e.occurred_at : true;
      return true;
    }
    case 'AdaptiveRoundDecided': {
      const key = candidateKey(e.suite, e.agent_version);
      const runs = adaptiveOf(b, key, h);
      const known = runs[e.run_id];
      if (history || (known && known.max_k >= e.max_k)) return false; // only a run's first round adds anything
      // a new record, not one changed in place: evolveBook's copy shares the old one
      const run = { dataset_version: e.dataset_version, max_k: e.max_k, ...(h > 0 ? { at: e.occurred_at } : {}) };
      b.adaptive = { ...b.adaptive, [key]: { ...runs, [e.run_id]: run } };
      return true;
    }
  }
};

/**
 * Drops, in place, what lies past the horizon: decided ids, verdict lists, alerts and adaptive runs (under the ids
 * horizon, `idHorizonMs` with no horizon: decided ids and verdict lists only; under the alerts horizon,
 * `alertHorizonMs` with no horizon: alerts older than the latest alert by more than it). What a fold reads is the
 * same before and after (`pastHorizon` hides it already): only memory and the snapshot shrink.
 */
export const pruneBook = (b: GateBook, horizonMs = 0, idHorizonMs = 0, alertHorizonMs = 0): void => {
  if (horizonMs <= 0 && alertHorizonMs > 0)
    for (const [id, t] of Object.entries(b.alerts))
      if (pastHorizon(b.alerts_at, t, alertHorizonMs)) delete b.alerts[id];
  const hi = horizonMs > 0 ? horizonMs : idHorizonMs;
  if (hi <= 0) return;
  const pastIds = (t: number | true | undefined) => pastHorizon(b.at, t, hi);
  for (const [id, t] of Object.entries(b.decided ?? {})) if (pastIds(t)) delete b.decided![id];
  for (const key of Object.keys(b.verdicts)) {
    const { ids, at } = liveVerdicts(b, key, hi);
    if (ids.length === (b.verdicts[key]?.length ?? 0)) continue;
    if (ids.length > 0) {
      b.verdicts[key] = ids;
      (b.verdicts_at ??= {})[key] = at;
    } else {
      delete b.verdicts[key];
      delete b.verdicts_at?.[key];
    }
  }
  if (horizonMs <= 0) return;
  const past = (t: number | true | undefined) => pastHorizon(b.at, t, horizonMs);
  for (const [id, t] of Object.entries(b.alerts)) if (past(t)) delete b.alerts[id];
  for (const key of Object.keys(b.adaptive ?? {})) {
    const runs = adaptiveOf(b, key, horizonMs);
    if (Object.keys(runs).length > 0) b.adaptive![key] = runs;
    else delete b.adaptive![key];
  }
};

/**
 * What the log says of a comparison (`forgetDecided`): its candidate's records of passk.decisions (its key's, in log
 * order, on its partition), folded as a book that forgets nothing would fold them. `decided`: a verdict on it
 * follows its first declaration (a re-declaration is then a no-op, as with the id in memory); `verdicts`: the
 * candidate's verdict ids (a later verdict on it is `repeated_verdict`). A comparison's events all carry its
 * candidate's key, so its key's records are all a book's entries for it and for the candidate's verdicts depend on.
 */
export const decidedInLog = (
  records: Iterable<PasskEvent>,
  comparisonId: string,
  key: string,
): { decided: boolean; verdicts: string[] } => {
  const b = emptyBook();
  for (const e of records) if (isDecision(e)) foldBookInto(b, e, EVICT_DECIDED);
  return { decided: b.decided?.[comparisonId] !== undefined, verdicts: b.verdicts[key] ?? [] };
};

/** `foldBookInto` on a copy: the book itself when the event changes nothing (a duplicate by its key). */
export const evolveBook = (book: GateBook, e: DecisionEvent): GateBook => {
  const b: GateBook = {
    comparisons: { ...book.comparisons },
    verdicts: { ...book.verdicts },
    alerts: { ...book.alerts },
    ...(book.decided ? { decided: { ...book.decided } } : {}),
    ...(book.adaptive ? { adaptive: { ...book.adaptive } } : {}),
    ...(book.verdicts_at ? { verdicts_at: { ...book.verdicts_at } } : {}),
    ...(book.at === undefined ? {} : { at: book.at }),
    ...(book.alerts_at === undefined ? {} : { alerts_at: book.alerts_at }),
  };
  return foldBookInto(b, e) ? b : book;
};

/** What the decision step may look at: row states by version, datasets and closed runs (all partitions). */
export interface GateView {
  rows(suite: string, datasetVersion: string, agentVersion: string): ReadonlyMap<string, StreamRowState>;
  dataset(datasetId: string): DatasetState | undefined;
  /** The runs of a version declared finished (RunClosed), on every dataset version. */
  closed(suite: string, agentVersion: string): readonly RunClosed[];
}

export interface GateOptions {
  readonly producer: string;
  /** @default 3 */
  readonly minAttempts?: number;
  /** The book's horizon (`FoldOptions.horizonMs`): verdicts and adaptive runs past it are not read. @default 0 */
  readonly horizonMs?: number;
  /** The ids horizon (`FoldOptions.idHorizonMs`, without a horizon): verdicts past it are not read. @default 0 */
  readonly idHorizonMs?: number;
}

/** The rows a comparison reads: all, or only those of the dataset version. A stream row state is a core row state. */
const rowsOf = (
  rows: ReadonlyMap<string, StreamRowState>,
  only?: ReadonlySet<string>,
): ReadonlyMap<string, StreamRowState> => (only ? new Map([...rows].filter(([id]) => only.has(id))) : rows);

/** What one version of a comparison has, against what the gate needs of it. */
export interface VersionProgress {
  readonly version: string;
  readonly complete: boolean;
  /** Rows (of the dataset, else of both versions' trials) short of the required graded attempts. */
  readonly short: readonly { readonly row_id: string; readonly graded: number }[];
  /** Its runs declared finished on the dataset version, and how many of their trials its rows reflect. */
  readonly runs: readonly { readonly run_id: string; readonly trials: number; readonly recorded: number }[];
}

/** Where a comparison stands: the gate decides once both versions are complete; `gate --status` prints it. */
export interface ComparisonProgress {
  /** Where the row set comes from; `unknown`: only closed runs can complete a version. */
  readonly row_set: 'dataset' | 'declared' | 'unknown';
  readonly rows: number;
  readonly required_attempts: number;
  /** The dataset the comparison names, and whether passk.datasets holds rows of its version. */
  readonly dataset?: { readonly id: string; readonly published: boolean };
  readonly baseline: VersionProgress;
  readonly candidate: VersionProgress;
}

/**
 * A version is complete when every row of the comparison has the required graded attempts (the row
 * set is known: from the dataset, or from the declared row count), or when its closed runs on the
 * dataset version are all reflected in its rows. Pure: the processors and `gate --status` share it.
 */
export const progressOf = (c: ComparisonState, view: GateView, minAttempts?: number): ComparisonProgress => {
  const d = c.declared;
  const required = d.required_attempts ?? minAttempts ?? DEFAULT_REPORT_OPTIONS.minAttempts;
  const baseline = view.rows(d.suite, d.dataset_version, d.baseline);
  const candidate = view.rows(d.suite, d.dataset_version, d.candidate);
  const dataset = d.dataset_id ? view.dataset(d.dataset_id) : undefined;
  const datasetRows = dataset ? [...rowsAt(dataset, d.dataset_version).keys()] : [];
  const rowIds = datasetRows.length > 0 ? datasetRows : [...new Set([...baseline.keys(), ...candidate.keys()])];
  const declared = d.rows !== undefined && rowIds.length >= d.rows;
  const known = datasetRows.length > 0 || declared;
  const version = (v: string, rows: ReadonlyMap<string, StreamRowState>): VersionProgress => {
    const short = rowIds
      .map((row_id) => ({ row_id, graded: rows.get(row_id)?.n ?? 0 }))
      .filter((r) => r.graded < required);
    const runs = view
      .closed(d.suite, v)
      .filter((r) => r.dataset_version === d.dataset_version)
      .map((run) => {
        let recorded = 0;
        for (const r of rows.values()) for (const a of r.attempts) if (a.run_id === run.run_id) recorded++;
        return { run_id: run.run_id, trials: run.trials, recorded };
      });
    const complete =
      (known && rowIds.length > 0 && short.length === 0) ||
      (runs.length > 0 && runs.every((r) => r.recorded >= r.trials));
    return { version: v, complete, short, runs };
  };
  return {
    row_set: datasetRows.length > 0 ? 'dataset' : declared ? 'declared' : 'unknown',
    rows: rowIds.length,
    required_attempts: required,
    ...(d.dataset_id ? { dataset: { id: d.dataset_id, published: datasetRows.length > 0 } } : {}),
    baseline: version(d.baseline, baseline),
    candidate: version(d.candidate, candidate),
  };
};

const confirmed = (rows: ReadonlyMap<string, StreamRowState>, req: ConfirmationRequested): boolean => {
  const marked = isConfirmationRun({ confirmationRuns: [req.run_id] });
  return req.rows.every(
    (id) =>
      (rows.get(id)?.attempts.filter((a) => a.passed !== null && marked(a.run_id)).length ?? 0) >=
      requestedAttempts(req, id),
  );
};

const maxTime = (...groups: ReadonlyMap<string, StreamRowState>[]): number => {
  let t = 0;
  for (const g of groups) for (const r of g.values()) t = Math.max(t, r.occurred_at);
  return t;
};

const toGateEvaluated = (
  c: ComparisonState,
  v: GateVerdict,
  at: number,
  repeated: boolean,
  producer: string,
  adaptive?: GateEvaluated['adaptive'],
): GateEvaluated => {
  const d = c.declared;
  const evidence = v.evidence.map((x) => ({
    row_id: x.row_id,
    baseline_attempts: x.baseline_attempts,
    candidate_attempts: x.candidate_attempts,
  }));
  return {
    event_id: deterministicEventId(at, 'GateEvaluated', d.comparison_id, JSON.stringify(evidence)),
    type: 'GateEvaluated',
    schema_version: 2,
    occurred_at: at,
    producer,
    gate_id: d.comparison_id,
    suite: d.suite,
    ...(d.dataset_id ? { dataset_id: d.dataset_id } : {}),
    dataset_version: d.dataset_version,
    baseline: d.baseline,
    candidate: d.candidate,
    verdict: v.verdict,
    reasons: v.rules.map((r) => ({
      rule: r.rule,
      passed: r.passed,
      detail: r.detail,
      rows: r.rows,
      ...(r.suite === undefined ? {} : { suite: r.suite }),
      ...(r.dataset_version === undefined ? {} : { dataset_version: r.dataset_version }),
    })),
    evidence,
    ...(repeated ? { repeated_verdict: true } : {}),
    must_not_break: v.must_not_break.map((m) => ({ ...m, baseline: { ...m.baseline }, candidate: { ...m.candidate } })),
    ...(adaptive ? { adaptive } : {}),
  };
};

/**
 * What an adaptive candidate's decision took: every attempt of the candidate on the comparison's rows (ungraded and
 * confirmations included, the confirmations also counted apart) against fixed k = the largest max-k of its adaptive
 * runs on the dataset version.
 */
const adaptiveCostOf = (
  book: GateBook,
  d: ComparisonDeclared,
  candidate: ReadonlyMap<string, StreamRowState>,
  rows: number,
  horizonMs?: number,
): GateEvaluated['adaptive'] => {
  const ks = Object.values(adaptiveOf(book, candidateKey(d.suite, d.candidate), horizonMs))
    .filter((r) => r.dataset_version === d.dataset_version)
    .map((r) => r.max_k);
  if (ks.length === 0) return undefined;
  const confirmation = isConfirmationRun({});
  let attempts = 0;
  let confirmations = 0;
  for (const r of candidate.values()) {
    attempts += r.attempts.length;
    for (const a of r.attempts) if (confirmation(a.run_id)) confirmations++;
  }
  return { attempts, confirmations, rows, max_k: maxOf(ks) };
};

/**
 * The candidate's adaptive runs on the comparison's dataset version that are still open (no RunClosed yet): known
 * from their rounds (the book) or from their attempts' run ids (`adaptive-…`, which may arrive before the rounds).
 * Undefined when there is none; else the max-k a must-not-break row must pass to be held (the default when no
 * round is in yet).
 */
export const openAdaptiveRun = (
  book: GateBook,
  d: ComparisonDeclared,
  candidate: ReadonlyMap<string, StreamRowState>,
  view: GateView,
  horizonMs?: number,
): { max_k: number } | undefined => {
  const closed = new Set(view.closed(d.suite, d.candidate).map((r) => r.run_id));
  const runs = adaptiveOf(book, candidateKey(d.suite, d.candidate), horizonMs);
  const open = new Set<string>();
  for (const [id, r] of Object.entries(runs))
    if (r.dataset_version === d.dataset_version && !closed.has(id)) open.add(id);
  if (open.size === 0)
    for (const r of candidate.values())
      for (const a of r.attempts) if (isAdaptiveRunId(a.run_id) && !closed.has(a.run_id)) open.add(a.run_id);
  if (open.size === 0) return undefined;
  const known = [...open].flatMap((id) => (runs[id] ? [runs[id].max_k] : []));
  return { max_k: known.length > 0 ? maxOf(known) : DEFAULT_SEQUENTIAL_GATE.passAttempts };
};

/** One must-not-break row's counts for the sequential gate: all graded attempts, and the baseline's confirmation ones. */
const sequentialRow = (
  row_id: string,
  baseline: ReadonlyMap<string, StreamRowState>,
  candidate: ReadonlyMap<string, StreamRowState>,
  confirmation: (runId: string) => boolean,
): GateRowInput => {
  const counts = (rows: ReadonlyMap<string, StreamRowState>, only?: (runId: string) => boolean) => {
    let n = 0;
    let c = 0;
    for (const a of rows.get(row_id)?.attempts ?? [])
      if (a.passed !== null && (!only || only(a.run_id))) {
        n++;
        if (a.passed) c++;
      }
    return { n, c };
  };
  return {
    row_id,
    baseline: counts(baseline),
    baseline_confirmation: counts(baseline, confirmation),
    candidate: counts(candidate),
  };
};

/**
 * The decision step for one comparison: nothing yet, a confirmation request, or the verdict.
 * Pure: the same book entry and view give the same events.
 *
 * While the candidate's adaptive run is open, the gate is sequential (docs/adaptive.md): once the baseline is
 * complete, a must-not-break row the candidate failed (with min-attempts graded attempts) is sent to confirmation
 * at once, the gate fails as soon as one is confirmed broken, and passes as soon as every must-not-break row is
 * held (the candidate passed max-k attempts) or not covered, when the rules over what is recorded agree. The
 * runner follows the verdict and stops the run (`passk run --adaptive`, reason `gate_decided`). Otherwise, or
 * once the run is closed, the gate waits for both versions to be complete, as for any run.
 */
export const decideComparison = (
  book: GateBook,
  c: ComparisonState,
  view: GateView,
  o: GateOptions,
): (ConfirmationRequested | GateEvaluated)[] => {
  if (c.status === 'decided') return [];
  const d = c.declared;
  const minAttempts = o.minAttempts ?? DEFAULT_REPORT_OPTIONS.minAttempts;
  const progress = progressOf(c, view, minAttempts);
  const baseline = view.rows(d.suite, d.dataset_version, d.baseline);
  const candidate = view.rows(d.suite, d.dataset_version, d.candidate);
  const adaptive = openAdaptiveRun(book, d, candidate, view, o.horizonMs);
  if (!progress.baseline.complete || (!adaptive && !progress.candidate.complete)) return [];
  const dataset = d.dataset_id ? view.dataset(d.dataset_id) : undefined;
  const datasetRows = dataset ? [...rowsAt(dataset, d.dataset_version).keys()] : [];
  const only = datasetRows.length > 0 ? new Set(datasetRows) : undefined;
  const pair: PairInput = {
    suite: d.suite,
    dataset_version: d.dataset_version,
    baseline: { version: d.baseline, rows: rowsOf(baseline, only) },
    candidate: { version: d.candidate, rows: rowsOf(candidate, only) },
  };
  const opts = { ...DEFAULT_REPORT_OPTIONS, minAttempts };
  const at = Math.max(d.occurred_at, maxTime(baseline, candidate));
  const confirmations = d.confirmation_attempts ?? 3;
  // every must-not-break row of the dataset's latest version counts: a confirmed failure binds every later gate
  const ids = [...new Set([...(d.must_not_break ?? []), ...(dataset ? mustNotBreakAt(dataset) : [])])].sort();
  const extra = d.must_not_break_extra_attempts ?? 0;
  const request = (suspects: string[]): ConfirmationRequested => {
    // must-not-break as the gate counts it: declared, in the dataset, or tagged on the baseline's trials
    const tagged =
      extra > 0 && confirmations > 0
        ? suspects.filter((id) => ids.includes(id) || baseline.get(id)?.tags.includes(MUST_NOT_BREAK_TAG))
        : [];
    return {
      event_id: deterministicEventId(at, 'ConfirmationRequested', d.comparison_id),
      type: 'ConfirmationRequested',
      schema_version: 1,
      occurred_at: at,
      producer: o.producer,
      comparison_id: d.comparison_id,
      suite: d.suite,
      ...(d.dataset_id ? { dataset_id: d.dataset_id } : {}),
      dataset_version: d.dataset_version,
      baseline: d.baseline,
      candidate: d.candidate,
      rows: suspects,
      attempts: confirmations,
      run_id: `confirm-${d.comparison_id}`,
      reason: `${suspects.length} row(s) stable-correct on ${d.baseline} are not on ${d.candidate}: run both versions again on them`,
      ...(tagged.length > 0 ? { must_not_break: { rows: tagged, attempts: confirmations + extra } } : {}),
    };
  };
  const confirmedBoth = () =>
    !c.confirmation || (confirmed(baseline, c.confirmation) && confirmed(candidate, c.confirmation));
  const verdictOf = () =>
    evaluateGate(
      {
        baseline: d.baseline,
        candidate: d.candidate,
        pairs: [pair],
        mustNotBreak: { tag: MUST_NOT_BREAK_TAG, ids: ids.map((row_id) => ({ suite: d.suite, row_id })) },
        rules: d.rules ?? {},
      },
      opts,
    );
  const emit = (verdict: GateVerdict): GateEvaluated => {
    const idHorizon = (o.horizonMs ?? 0) > 0 ? o.horizonMs : o.idHorizonMs;
    const previous = verdictsOf(book, candidateKey(d.suite, d.candidate), idHorizon);
    const cost = adaptiveCostOf(book, d, rowsOf(candidate, only), progress.rows, o.horizonMs);
    const draft = toGateEvaluated(c, verdict, at, false, o.producer, cost);
    const repeated = previous.some((id) => id !== draft.event_id);
    return repeated ? toGateEvaluated(c, verdict, at, true, o.producer, cost) : draft;
  };

  if (adaptive) {
    // the sequential gate binds only must-not-break rows: without any, the run's end decides
    if (ids.length === 0) return [];
    const marked = isConfirmationRun({ confirmationRuns: [`confirm-${d.comparison_id}`] });
    const seq = sequentialGate(
      ids.map((id) => sequentialRow(id, baseline, candidate, marked)),
      { minAttempts, confirmAttempts: confirmations, passAttempts: adaptive.max_k },
    );
    if (c.status === 'open' && confirmations > 0) {
      const suspects = seq.rows.filter((r) => r.status === 'suspect').map((r) => r.row_id);
      if (suspects.length > 0) return [request(suspects)];
    }
    if (seq.verdict === 'open' || !confirmedBoth()) return [];
    const verdict = verdictOf();
    // an early pass needs the rules over what is recorded to agree; otherwise the run's end decides
    return verdict.verdict === seq.verdict ? [emit(verdict)] : [];
  }
  if (c.status === 'open' && confirmations > 0) {
    const suspects = compareVersions(pair, opts).lost_stable_correct;
    if (suspects.length > 0) return [request(suspects)];
  }
  if (c.status === 'confirming' && !confirmedBoth()) return [];
  return [emit(verdictOf())];
};

/** The RunClosed a RunFinished becomes (the trial topology forwards it to where the gates are). */
export const toRunClosed = (f: RunFinished, producer: string): RunClosed => ({
  event_id: deterministicEventId(f.occurred_at, 'RunClosed', f.event_id),
  type: 'RunClosed',
  schema_version: 1,
  occurred_at: f.occurred_at,
  producer,
  run_id: f.run_id,
  suite: f.suite,
  dataset_version: f.dataset_version,
  agent_version: f.agent.version,
  status: f.status,
  trials: f.trials,
  source_event_id: f.event_id,
});
