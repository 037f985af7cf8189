/**
 * Where the fold's gap to the tight fold is (issue #14, docs/performance.md "Session 7"): each line against the
 * tight fold (`paired`, CPU time, median of 5 pairs, same events, same process):
 *   node --import tsx bench/profile/foldSplit.ts [events=200000]
 * - floor: the tight fold's work plus one changelog-shaped record per changed row per 1,000-event batch, with a
 *   copy of the row's attempts: the least a fold that emits a changelog must do;
 * - passk's own path in steps: `toAttemptRecord` alone; `foldTrialsOwned`; + the version summaries; + a
 *   `RowStateChanged` per changed row; the topology itself (the bench's `fold: trial topology` line).
 */
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import { foldTrialsOwned, type RowTable } from '../../processors/folds/rowTable.ts';
import { applyRowChanges, type VersionSummaries } from '../../processors/folds/versionSummary.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';

import {
  batchesOf,
  chunks,
  memorySource,
  paired,
  runTopology,
  syntheticTrials,
  tightChangelogFoldAll,
  tightFold,
} from '../processors.ts';

const n = Number(process.argv[2] ?? 200_000);
const events = [...syntheticTrials({ events: n, rows: 5_000, versions: 4 })];
const parts = chunks(events, 1_000);

const steps = (summaries: boolean, records: boolean) => (): number => {
  const tables: RowTable[] = [new Map(), new Map(), new Map(), new Map()];
  const sums: VersionSummaries[] = [new Map(), new Map(), new Map(), new Map()];
  let seqs = 0;
  parts.forEach((part, i) => {
    const changes = foldTrialsOwned(tables[i % 4]!, part);
    if (summaries) applyRowChanges(sums[i % 4]!, changes);
    if (records) for (const c of changes) seqs += toRowStateChanged(c.after, 'p', c.key).seq;
  });
  return seqs;
};

const attemptRecords = (): number => {
  let x = 0;
  for (const e of events as TrialRecorded[]) x += toAttemptRecord(e).attempt;
  return x;
};

const batches = batchesOf(events);
const topology = () =>
  runTopology(
    memorySource(async function* () {
      yield* batches;
    }),
  );

const lines: [string, () => unknown][] = [
  ['floor: tight fold + a changelog record per changed row per batch', () => tightChangelogFoldAll(parts)],
  ['toAttemptRecord alone', attemptRecords],
  ['foldTrialsOwned', steps(false, false)],
  ['+ version summaries', steps(true, false)],
  ['+ a RowStateChanged per changed row', steps(true, true)],
  ['the topology (units, rx stages)', topology],
];
console.log(`${n.toLocaleString('en-US')} trials over 5,000 rows × 4 versions, each line against the tight fold:`);
for (const [name, run] of lines) {
  const m = await paired(5, () => tightFold(events), run);
  console.log(`${name}: ${Math.round(n / m.candidate).toLocaleString('en-US')} ev/s, ${m.ratio.toFixed(2)}×`);
}
