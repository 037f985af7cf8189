/**
 * In-process A/B of the hot-path changes of issue #14 (docs/performance.md), CPU time, alternating runs,
 * median of 5 pairs (`paired`), on the bench's synthetic trials:
 *   node --import tsx bench/profile/ab.ts [events=200000]
 * - decode: the zod codec (`jsonCodec`, before) against the log adapters' `fastJsonCodec` (one compiled validator);
 * - fold: the immutable reference fold (`foldTrials`, a new state per event, before) against the topology's
 *   in-place `foldTrialsOwned`, each with the version summaries and a changelog record per changed row.
 */
import { fastJsonCodec } from '../../log/fastValidate.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import { foldTrials, foldTrialsOwned } from '../../processors/folds/rowTable.ts';
import { applyRowChanges, type VersionSummaries } from '../../processors/folds/versionSummary.ts';
import { jsonCodec, type EventCodec } from '../../schemas/codec.ts';
import { chunks, paired, syntheticTrials, tightFold } from '../processors.ts';

const n = Number(process.argv[2] ?? 200_000);
const events = [...syntheticTrials({ events: n, rows: 5_000, versions: 4 })];
const parts = chunks(events, 1_000);
const bytes = events.map((e) => new TextEncoder().encode(JSON.stringify(e)));

const decodeAll = (codec: EventCodec) => async () => {
  for (const b of bytes) await codec.decode(b);
};
const foldAll = (fold: typeof foldTrials | typeof foldTrialsOwned) => () => {
  const tables = [new Map(), new Map(), new Map(), new Map()];
  const sums: VersionSummaries[] = [new Map(), new Map(), new Map(), new Map()];
  let seqs = 0;
  parts.forEach((part, i) => {
    const changes = fold(tables[i % 4]!, part);
    applyRowChanges(sums[i % 4]!, changes);
    for (const c of changes) seqs += toRowStateChanged(c.after, 'p').seq;
  });
  return seqs;
};
const rate = (s: number) => `${Math.round(n / s).toLocaleString('en-US')}/s`;

const d = await paired(5, decodeAll(jsonCodec), decodeAll(fastJsonCodec));
console.log(`decode: zod ${rate(d.baseline)}, fast ${rate(d.candidate)}: ${d.ratio.toFixed(2)}× faster`);
const f = await paired(5, foldAll(foldTrials), foldAll(foldTrialsOwned));
console.log(`fold: immutable ${rate(f.baseline)}, in place ${rate(f.candidate)}: ${f.ratio.toFixed(2)}× faster`);
const ti = await paired(5, () => tightFold(events), foldAll(foldTrials));
const to = await paired(5, () => tightFold(events), foldAll(foldTrialsOwned));
console.log(`against the tight fold: immutable ${ti.ratio.toFixed(2)}×, in place ${to.ratio.toFixed(2)}×`);
