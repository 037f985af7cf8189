import { fastJsonCodec } from '../log/fastValidate.ts';
import type { RowStateChanged } from '../schemas/events/decisions.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { KEY_SEP } from '../schemas/topics.ts';
import { foldTrials, restoreTable, type RowTable } from '../processors/folds/rowTable.ts';
import { fromRowStateChanged, toRowStateChanged } from '../processors/folds/rowState.ts';
import {
  batchesOf,
  chunks,
  memorySource,
  paired,
  runTopology,
  syntheticTrials,
  tightFold,
  type BenchLine,
} from './processors.ts';
import { heapAfterGc as heap } from './heap.ts';

/**
 * How cost grows with the state (issue #14, part 4), each figure against a baseline of the same run:
 * - fold throughput of the trial topology at `rows` rows of state (`attempts` trials per row), vs the
 *   tight mutable fold of the same events (`attempts` per row, default 2: 1M rows = 2M events in memory);
 * - memory per row of state: retained heap of the topology's row table (`foldTrials`) after a full GC,
 *   per row, vs the tight fold's table of the same trials;
 * - restore from the changelog, per 100k rows: decode each RowStateChanged (JSON + zod), rebuild the
 *   row state and the table (`restoreTable`), vs JSON.parse of the same bytes into a Map. In-process
 *   only: reading the topic is the log's cost, measured by the end-to-end lines.
 */

export interface GrowthLine {
  readonly rows: number;
  readonly fold: BenchLine;
  /** Retained bytes per row of state: the topology's table, and the tight fold's. */
  readonly bytesPerRow: number;
  readonly tightBytesPerRow: number;
  /** Milliseconds to restore 100k rows from changelog bytes, and the JSON.parse baseline. */
  readonly restoreMsPer100k: number;
  readonly parseMsPer100k: number;
}

export async function benchGrowth(o: {
  rows: readonly number[];
  attempts?: number;
  pairs?: number;
  log?: (line: string) => void;
}): Promise<GrowthLine[]> {
  const attempts = o.attempts ?? 2;
  const say = o.log ?? (() => {});
  const out: GrowthLine[] = [];
  for (const rows of o.rows) {
    const shape = { events: rows * attempts, rows: rows / 4, versions: 4 };
    const events = [...syntheticTrials(shape)];
    const batches = batchesOf(events);
    const m = await paired(
      o.pairs ?? 1,
      () => tightFold(events),
      () =>
        runTopology(
          memorySource(async function* () {
            yield* batches;
          }),
        ),
    );
    // memory: each table alone, what a GC frees once it is dropped (not the heap's growth while it was built:
    // garbage of earlier sizes freed meanwhile made that negative, -184 B a row at 250k rows after 25k)
    let table: RowTable | undefined = new Map();
    for (const part of chunks(events, 1_000)) foldTrials(table, part);
    const rowsOfState = table.size;
    // restore: the changelog's bytes of every row, then decode + rebuild vs JSON.parse
    const bytes = await Promise.all(
      [...table.values()].map((s) => fastJsonCodec.encode(toRowStateChanged(s, 'passk-bench/0'))),
    );
    let held = heap();
    table = undefined;
    const bytesPerRow = (held - heap()) / rowsOfState;
    let tight: Map<string, unknown> | undefined = new Map<string, unknown>();
    tightFoldInto(tight, events);
    const tightRows = tight.size - 1; // less the event-id set's entry
    held = heap();
    tight = undefined;
    const tightBytesPerRow = (held - heap()) / tightRows;
    const utf8 = new TextDecoder();
    let restored = 0;
    const r = await paired(
      o.pairs ?? 1,
      () => {
        const m = new Map<string, unknown>();
        for (const b of bytes) {
          const e = JSON.parse(utf8.decode(b)) as RowStateChanged;
          m.set(`${e.suite}${KEY_SEP}${e.dataset_version}${KEY_SEP}${e.agent_version}${KEY_SEP}${e.row_id}`, e);
        }
        return m.size;
      },
      async () => {
        const states = [];
        for (const b of bytes) states.push(fromRowStateChanged((await fastJsonCodec.decode(b)) as RowStateChanged));
        restored = restoreTable(states).size;
      },
    );
    if (restored !== rowsOfState) throw new Error(`restored ${restored} rows of ${rowsOfState}`);
    const line: GrowthLine = {
      rows: rowsOfState,
      fold: {
        name: `fold at ${rowsOfState.toLocaleString('en-US')} rows of state`,
        subset: true,
        eventsPerSec: events.length / m.candidate,
        baseline: 'tight mutable Map fold',
        baselineEventsPerSec: events.length / m.baseline,
        ratio: m.ratio,
      },
      bytesPerRow,
      tightBytesPerRow,
      restoreMsPer100k: (r.candidate * 1000 * 100_000) / rowsOfState,
      parseMsPer100k: (r.baseline * 1000 * 100_000) / rowsOfState,
    };
    say(
      `growth: ${rowsOfState} rows: fold ${Math.round(line.fold.eventsPerSec)} ev/s (${m.ratio.toFixed(2)}× tight), ${Math.round(bytesPerRow)} B/row (tight ${Math.round(tightBytesPerRow)}), restore ${line.restoreMsPer100k.toFixed(0)} ms/100k rows (JSON.parse ${line.parseMsPer100k.toFixed(0)})`,
    );
    out.push(line);
  }
  return out;
}

/** The tight fold's table kept (tightFold returns only its size). */
const tightFoldInto = (table: Map<string, unknown>, events: readonly TrialRecorded[]): void => {
  const seen = new Set<string>();
  for (const e of events) {
    if (seen.has(e.event_id)) continue;
    seen.add(e.event_id);
    const key = `${e.suite}${KEY_SEP}${e.dataset_version}${KEY_SEP}${e.agent.version}${KEY_SEP}${e.row_id}`;
    let row = table.get(key) as { n: number; c: number; slots: Map<string, unknown> } | undefined;
    if (!row) table.set(key, (row = { n: 0, c: 0, slots: new Map() }));
    row.slots.set(`${e.run_id}${KEY_SEP}${e.attempt}`, {
      event_id: e.event_id,
      passed: e.passed,
      output: e.output ?? null,
    });
    row.n++;
    if (e.passed) row.c++;
  }
  // the event-id set is part of the tight fold's state too
  table.set('\u0000seen', seen);
};
