import { performance } from 'node:perf_hooks';

/**
 * The bench's guard against baselines that flatter. A baseline is the fastest plain code doing the
 * same work on the same items; it is implausible, and the bench exits non-zero, when
 * - it reads its items faster than this machine copies memory (items/s × bytes per item above the
 *   measured memcpy bandwidth): it did not touch them, it measured nothing;
 * - when it does a subset of passk's work on the same items, it is slower than passk: it is not tight
 *   (or it overlaps passk's work and is charged for it).
 */
export interface Checked {
  readonly name: string;
  /** Items per second of the baseline. */
  readonly baselinePerSec: number;
  readonly candidatePerSec: number;
  /** Bytes of input each item stands for (its encoded size), when known. */
  readonly bytesPerItem?: number;
  /** The baseline does a subset of passk's work on the same items: it must not be slower than passk. */
  readonly subset?: boolean;
}

/** Bytes/s of a large Buffer copy, the best of a few: an upper bound on how fast anything reads memory. */
export const memoryBandwidth = (mib = 256, runs = 5): number => {
  const src = Buffer.alloc(mib * 1024 * 1024, 7);
  const dst = Buffer.allocUnsafe(src.length);
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    src.copy(dst);
    best = Math.min(best, (performance.now() - t) / 1000);
  }
  return src.length / best;
};

/** Slack for timing noise on a shared machine: a subset baseline may be at most this much slower than passk. */
export const SLACK = 1.1;

/** What is wrong with each baseline, as sentences (empty: all plausible). */
export const implausible = (lines: readonly Checked[], bandwidth: number): string[] =>
  lines.flatMap((l) => {
    const out: string[] = [];
    if (!(l.baselinePerSec > 0) || !Number.isFinite(l.baselinePerSec))
      out.push(`${l.name}: baseline rate ${l.baselinePerSec}/s is not a measurement`);
    else if (l.bytesPerItem && l.baselinePerSec * l.bytesPerItem > bandwidth)
      out.push(
        `${l.name}: baseline reads ${((l.baselinePerSec * l.bytesPerItem) / 1e9).toFixed(1)} GB/s, above this machine's memory bandwidth (${(bandwidth / 1e9).toFixed(1)} GB/s)`,
      );
    if (l.subset && l.candidatePerSec > l.baselinePerSec * SLACK)
      out.push(
        `${l.name}: baseline (${Math.round(l.baselinePerSec)}/s) is slower than passk (${Math.round(l.candidatePerSec)}/s) on a subset of the same work: not a tight baseline`,
      );
    return out;
  });
