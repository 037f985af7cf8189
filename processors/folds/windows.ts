import { z } from 'zod';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import { WindowShareRecord, type TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { KEY_SEP } from '../../schemas/topics.ts';
import { maxOf } from '../core/arrays.ts';

/**
 * Production windows over sampled traces, first stage: one source partition's share of every
 * window, in event time. A trace goes to every window of every spec that holds its time
 * (tumbling: slide = size; sliding: slide < size), once per grader. The watermark is the latest
 * event time seen minus the allowed lateness; a window closes when the watermark passes its end,
 * and a trace for a closed window is counted late (it stays in the raw traces, not in the window's
 * sums; a late trace that is its window's first opens the window, closed, with only the late count).
 * Sums are Horvitz–Thompson with w = 1/probability, additive across partitions.
 */
export const WindowSpec = z.object({ size_ms: z.number().int().positive(), slide_ms: z.number().int().positive() });
export type WindowSpec = z.infer<typeof WindowSpec>;

/** 1 h tumbling and 24 h sliding by 1 h. */
export const DEFAULT_WINDOWS: readonly WindowSpec[] = [
  { size_ms: 3_600_000, slide_ms: 3_600_000 },
  { size_ms: 86_400_000, slide_ms: 3_600_000 },
];

/** A window share as the snapshot records it, plus what stays in memory. */
export const WindowShare = WindowShareRecord.extend({
  /** fingerprint → [graded count, verdict bits: 1 passed, 2 failed]. In memory only (see restore). */
  fingerprints: z.record(z.string(), z.tuple([z.number(), z.number()])),
});
export type WindowShare = z.infer<typeof WindowShare>;

export const WindowsState = z.object({
  partition: z.number().int().nonnegative(),
  /** Latest event time seen. */
  maxTime: z.number().int(),
  /** Next offset of the source partition this state reflects. */
  through: z.number().int().nonnegative(),
  windows: z.record(z.string(), WindowShare),
  /** Trace event ids within the horizon (de-duplication), with their event time. */
  recent: z.record(z.string(), z.number()),
});
export type WindowsState = z.infer<typeof WindowsState>;

export interface WindowOptions {
  readonly specs: readonly WindowSpec[];
  readonly allowedLatenessMs: number;
}

const shareKey = (s: Pick<WindowShare, 'agent_version' | 'segment' | 'grader' | 'size_ms' | 'start'>) =>
  [s.agent_version, s.segment, s.grader, s.size_ms, s.start].join(KEY_SEP);

export const emptyWindows = (partition: number): WindowsState => ({
  partition,
  maxTime: 0,
  through: 0,
  windows: {},
  recent: {},
});
export const watermarkOf = (s: WindowsState, o: WindowOptions): number => s.maxTime - o.allowedLatenessMs;

/** Starts of the windows of `spec` that hold time t. */
export const windowStarts = (t: number, spec: WindowSpec): number[] => {
  const out: number[] = [];
  for (let start = Math.floor(t / spec.slide_ms) * spec.slide_ms; start > t - spec.size_ms; start -= spec.slide_ms)
    out.push(start);
  return out.reverse();
};

const share = (trace: TraceSampled, grader: string, size_ms: number, start: number): WindowShare => ({
  agent_version: trace.agent_version,
  segment: trace.segment,
  grader,
  size_ms,
  start,
  seq: 0,
  closed: false,
  graded: 0,
  ungraded: 0,
  w: 0,
  wy: 0,
  w2: 0,
  w2y: 0,
  repeated: 0,
  flipping: 0,
  late: 0,
  fingerprints: {},
});

const add = (s: WindowShare, fingerprint: string, weight: number, passed: boolean | null): void => {
  s.seq++;
  if (passed === null) {
    s.ungraded++;
    return;
  }
  const y = passed ? 1 : 0;
  const [count, bits] = s.fingerprints[fingerprint] ?? [0, 0];
  const nextBits = bits | (passed ? 1 : 2);
  s.graded++;
  s.w += weight;
  s.wy += weight * y;
  s.w2 += weight * weight;
  s.w2y += weight * weight * y;
  if (count === 1) s.repeated++;
  if (nextBits === 3 && bits !== 3) s.flipping++;
  s.fingerprints[fingerprint] = [count + 1, nextBits];
};

/**
 * Folds one trace at `offset` of the partition into `s`, in place (the state is owned by its
 * partition's fold, like a row table; copying it per trace would be quadratic). Returns the keys of
 * the shares it changed, including windows its new watermark closed. A trace before `through`
 * (already in restored shares), with an event id seen within the horizon, or a later revision of a trace, changes
 * nothing.
 */
export const foldTrace = (s: WindowsState, trace: TraceSampled, offset: number, o: WindowOptions): string[] => {
  if (offset < s.through) return [];
  s.through = offset + 1;
  if (s.recent[trace.event_id] !== undefined) return [];
  // A later revision of a trace (spans that arrived after it was recorded) is the same request: its window counts
  // it once, as first recorded.
  if ((trace.revision ?? 0) > 0) return [];
  const t = trace.occurred_at;
  const weight = 1 / trace.sampling.probability;
  const changed = new Set<string>();
  const watermark = watermarkOf(s, o);
  const verdicts = trace.verdicts && trace.verdicts.length > 0 ? trace.verdicts : [{ grader: 'none', passed: null }];
  for (const spec of o.specs)
    for (const start of windowStarts(t, spec))
      for (const v of verdicts) {
        const key = shareKey({
          agent_version: trace.agent_version,
          segment: trace.segment,
          grader: v.grader,
          size_ms: spec.size_ms,
          start,
        });
        let w = s.windows[key];
        if (w?.closed || (!w && start + spec.size_ms <= watermark)) {
          // late: counted as late in its window, never in its sums; a late trace that is the first of its
          // window opens it, closed, so the count is kept (and stored) all the same
          if (!w) s.windows[key] = w = { ...share(trace, v.grader, spec.size_ms, start), closed: true };
          w.seq++;
          w.late++;
          changed.add(key);
          continue;
        }
        if (!w) s.windows[key] = w = share(trace, v.grader, spec.size_ms, start);
        add(w, trace.input_fingerprint, weight, v.passed);
        changed.add(key);
      }
  s.maxTime = Math.max(s.maxTime, t);
  s.recent[trace.event_id] = t;
  for (const key of closeWindows(s, o)) changed.add(key);
  return [...changed];
};

/** Closes the shares the watermark has passed; returns their keys. */
const closeWindows = (s: WindowsState, o: WindowOptions): string[] => {
  const watermark = watermarkOf(s, o);
  const closed: string[] = [];
  for (const [key, w] of Object.entries(s.windows))
    if (!w.closed && w.start + w.size_ms <= watermark) {
      w.closed = true;
      w.seq++;
      w.fingerprints = {};
      closed.push(key);
    }
  return closed;
};

/** Drops closed shares and remembered ids older than the longest window plus the lateness (bounded memory). */
export const pruneWindows = (s: WindowsState, o: WindowOptions): WindowsState => {
  const horizon = horizonOf(s, o);
  for (const [key, w] of Object.entries(s.windows))
    if (w.closed && w.start + w.size_ms < horizon) delete s.windows[key];
  for (const [id, t] of Object.entries(s.recent)) if (t < horizon - o.allowedLatenessMs) delete s.recent[id];
  return s;
};

/** The horizon: shares of windows ending before it are dropped (closed long ago). */
export const horizonOf = (s: WindowsState, o: WindowOptions): number =>
  watermarkOf(s, o) - maxOf(o.specs.map((x) => x.size_ms));

const record = ({ fingerprints: _inMemory, ...share }: WindowShare): WindowShareRecord => share;

/** The partition's snapshot: every share it keeps, at its position (one compacted record per partition). */
export const toWindowsSnapshot = (
  s: WindowsState,
  partitions: number,
  producer: string,
  o: WindowOptions,
): TraceWindowsUpdated => ({
  event_id: deterministicEventId(s.maxTime, 'TraceWindowsUpdated', s.partition, s.through),
  type: 'TraceWindowsUpdated',
  schema_version: 1,
  occurred_at: s.maxTime,
  producer,
  source_partition: s.partition,
  source_partitions: partitions,
  through_offset: s.through,
  watermark: watermarkOf(s, o),
  horizon: horizonOf(s, o),
  shares: Object.keys(s.windows)
    .sort()
    .map((k) => record(s.windows[k]!)),
});

/**
 * The state a partition's latest snapshot restores: sums, seq and closed flags, and the position to
 * resume after. Fingerprint sets and remembered ids are not in the snapshot (they would make it
 * unbounded): after a restore, flips and duplicate ids are tracked again from that point on.
 */
export const restoreWindows = (
  partition: number,
  snapshots: readonly TraceWindowsUpdated[],
  o: WindowOptions,
): WindowsState => {
  let latest: TraceWindowsUpdated | undefined;
  for (const u of snapshots)
    if (u.source_partition === partition && (!latest || latest.through_offset < u.through_offset)) latest = u;
  const s = emptyWindows(partition);
  if (!latest) return s;
  s.through = latest.through_offset;
  s.maxTime = latest.watermark + o.allowedLatenessMs;
  for (const r of latest.shares) s.windows[shareKey(r)] = { ...r, fingerprints: {} };
  return pruneWindows(s, o);
};
