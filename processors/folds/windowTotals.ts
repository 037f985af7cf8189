import type { TraceWindowsUpdated, WindowShareRecord } from '../../schemas/events/traceWindowsUpdated.ts';
import type { WindowAlertRaised } from '../../schemas/events/windowAlertRaised.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { wilson, type Interval } from '../core/intervals.ts';
import { KEY_SEP } from '../../schemas/topics.ts';

/**
 * Production windows, second stage: the latest share of every source partition, summed. The pass
 * rate is the Hájek form of Horvitz–Thompson, Σw·y / Σw with w = 1/probability. Its interval is
 * Wilson's at Kish's effective sample size n_eff = (Σw)² / Σw², so unequal weights widen it; its
 * linearized variance, Σw²(y − p)² / (Σw)², feeds the one-sided test against offline pass@1.
 */
export interface WindowTotal {
  readonly agent_version: string;
  readonly segment: string;
  readonly grader: string;
  readonly size_ms: number;
  readonly start: number;
  readonly end: number;
  /** Σ of the shares' seq: grows with every change, so the store keeps the latest total. */
  readonly seq: number;
  /** Every share reporting has closed the window. */
  readonly closed: boolean;
  readonly graded: number;
  readonly ungraded: number;
  readonly w: number;
  readonly wy: number;
  readonly pass_rate: number | null;
  readonly interval: Interval | null;
  readonly variance: number | null;
  readonly repeated: number;
  readonly flipping: number;
  readonly late: number;
}

export const windowKeyOf = (
  r: Pick<WindowShareRecord, 'agent_version' | 'segment' | 'grader' | 'size_ms' | 'start'>,
): string => [r.agent_version, r.segment, r.grader, r.size_ms, r.start].join(KEY_SEP);

/**
 * The total of one window over the partitions' latest snapshots. It is final (`closed`) once every
 * partition of passk.traces has a snapshot whose watermark passed the window's end and that still
 * keeps the window (its horizon is before the end): each snapshot is one partition at one position,
 * so its share, or its lack of one, is that partition's last word on the window. The shares are summed in partition
 * order, so the same snapshots give the same total to the bit however they arrived.
 */
export const totalOf = (
  key: string,
  snapshots: ReadonlyMap<number, TraceWindowsUpdated>,
  confidence = 0.95,
): WindowTotal | undefined => {
  const shares: WindowShareRecord[] = [];
  let partitions = 0;
  // in partition order, not arrival order: a float sum depends on its order, and a rebuild meets the partitions'
  // snapshots in another order than the live gate did (deploy/rebuild.ts, replayWindows)
  for (const snap of [...snapshots.values()].sort((a, b) => a.source_partition - b.source_partition)) {
    partitions = Math.max(partitions, snap.source_partitions);
    const share = snap.shares.find((r) => windowKeyOf(r) === key);
    if (share) shares.push(share);
  }
  const first = shares[0];
  if (!first) return undefined;
  const end = first.start + first.size_ms;
  let closed = partitions > 0;
  for (let p = 0; p < partitions && closed; p++) {
    const snap = snapshots.get(p);
    closed = snap !== undefined && snap.watermark >= end && snap.horizon <= end;
  }
  const sum = (f: (r: WindowShareRecord) => number) => shares.reduce((a, r) => a + f(r), 0);
  const w = sum((r) => r.w);
  const wy = sum((r) => r.wy);
  const w2 = sum((r) => r.w2);
  const w2y = sum((r) => r.w2y);
  const p = w > 0 ? wy / w : null;
  const nEff = w2 > 0 ? (w * w) / w2 : 0;
  return {
    agent_version: first.agent_version,
    segment: first.segment,
    grader: first.grader,
    size_ms: first.size_ms,
    start: first.start,
    end,
    seq: sum((r) => r.seq) + (closed ? 1 : 0),
    closed,
    graded: sum((r) => r.graded),
    ungraded: sum((r) => r.ungraded),
    w,
    wy,
    pass_rate: p,
    interval: p === null || nEff === 0 ? null : wilson(p * nEff, nEff, confidence),
    variance: p === null ? null : (w2y * (1 - 2 * p) + p * p * w2) / (w * w),
    repeated: sum((r) => r.repeated),
    flipping: sum((r) => r.flipping),
    late: sum((r) => r.late),
  };
};

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf, |error| < 1.5e-7). */
export const normalCdf = (z: number): number => {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf =
    1 -
    t *
      (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
      Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
};

export interface AlertOptions {
  readonly producer: string;
  /** One-sided significance. @default 0.01 */
  readonly alpha?: number;
  /** Fewest graded traces before a window can alert. @default 30 */
  readonly minGraded?: number;
}

/**
 * An alert when a closed window's pass rate is significantly below the offline pass@1 of the same
 * version (treated as known: it rests on many more attempts). Undefined when there is no evidence.
 */
export const alertFor = (
  t: WindowTotal,
  offlinePassAt1: number | undefined,
  o: AlertOptions,
): WindowAlertRaised | undefined => {
  if (!t.closed || offlinePassAt1 === undefined || t.pass_rate === null || t.variance === null || t.interval === null)
    return undefined;
  if (t.graded < (o.minGraded ?? 30) || t.pass_rate >= offlinePassAt1) return undefined;
  const se = Math.sqrt(Math.max(t.variance, 1e-12));
  const p = 1 - normalCdf((offlinePassAt1 - t.pass_rate) / se);
  if (p >= (o.alpha ?? 0.01)) return undefined;
  const alert_id = deterministicEventId(
    t.end,
    'WindowAlertRaised',
    t.agent_version,
    t.segment,
    t.grader,
    t.size_ms,
    t.start,
  );
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return {
    event_id: alert_id,
    type: 'WindowAlertRaised',
    schema_version: 1,
    occurred_at: t.end,
    producer: o.producer,
    alert_id,
    agent_version: t.agent_version,
    segment: t.segment,
    grader: t.grader,
    window: { size_ms: t.size_ms, start: t.start, end: t.end },
    pass_rate: t.pass_rate,
    interval: [t.interval[0], t.interval[1]],
    sampled: t.graded,
    weight: t.w,
    offline_pass_at_1: offlinePassAt1,
    p_value: p,
    message: `${t.agent_version} / ${t.segment}: production pass rate ${pct(t.pass_rate)} (${pct(t.interval[0])}–${pct(t.interval[1])}, ${t.graded} sampled) is below offline pass@1 ${pct(offlinePassAt1)} (p = ${p.toExponential(1)})`,
  };
};
