import type { EventLog } from '../processors/ports.ts';
import { ARCHIVED, INGEST_LETTERS_GROUP } from '../processors/topologies/groups.ts';
import { TOPICS, type Topic } from '../schemas/topics.ts';
import type { Querier } from '../sinks/clickhouse/index.ts';
import { readLedger, trialTotals } from '../sinks/clickhouse/ledger.ts';

// How far the store is behind the log (deploy/rebuild.ts replays it), apart from the replay: `passk check` reads it
// without loading the topologies and rxjs (docs/performance.md, "CLI start-up").

/**
 * The store is a projection of the log. Every consumer group that writes to it is a projection: the ledger
 * (`store_positions`) records, per group, topic and partition, the position up to which its writes are durable in
 * the store, written after them and before the group commits to the log. So the ledger is never behind what the
 * log says was processed, unless the store lost data (deleted, emptied, a part or its metadata gone) or the group
 * ran without it (`passk process --no-store`): then the store is rebuilt by replaying the log.
 */
export const PROJECTIONS: readonly { readonly group: string; readonly topic: Topic }[] = [
  { group: 'passk-trials', topic: TOPICS.trials },
  { group: 'passk-datasets', topic: TOPICS.datasets },
  { group: 'passk-gates', topic: TOPICS.decisions },
  { group: 'passk-windows', topic: TOPICS.traces },
  ...[...ARCHIVED.keys()].map((topic) => ({ group: `passk-archive-${topic}`, topic })),
  { group: INGEST_LETTERS_GROUP, topic: TOPICS.dlq },
];

/**
 * The marker a rebuild leaves when the log itself gives trials and row states that differ (`passk check` lists them):
 * the three totals and the trial processor's committed offsets it saw. The same again means a replay would change
 * nothing, so `passk process` does not replay the log at every start; any other loss still does.
 */
export const markerOf = (totals: StoreDrift['totals'], committed: ReadonlyMap<number, number>) => ({
  projection: 'passk-rebuild',
  topic: `${totals.trials}/${totals.folded}/${totals.summarized}`,
  partition: 0,
  nextOffset: 1 + [...committed.values()].reduce((a, b) => a + b, 0),
});

export interface BehindPosition {
  readonly projection: string;
  readonly topic: string;
  readonly partition: number;
  /** The group's committed position in the log. */
  readonly committed: number;
  /** The position up to which the store holds the group's writes (0: none). */
  readonly stored: number;
}

export interface StoreDrift {
  /** Positions the log has committed that the store does not hold. */
  readonly behind: readonly BehindPosition[];
  /** Distinct stored trials, attempts in the row states, attempts in the version summaries. */
  readonly totals: { readonly trials: number; readonly folded: number; readonly summarized: number };
  /** The three totals differ: a part of one of the tables is lost (or the log itself disagrees, see `known`). */
  readonly damaged: boolean;
  /** A rebuild from this log already left these totals: replaying it again would change nothing. */
  readonly known: boolean;
  /** The trial processor's committed offsets. */
  readonly trialsCommitted: ReadonlyMap<number, number>;
}

/** Whether the store must be rebuilt from the log. */
export const needsRebuild = (d: StoreDrift): boolean => d.behind.length > 0 || (d.damaged && !d.known);

/** Compares the store's ledger with the log's committed offsets, and the trial projection's three totals. */
export const storeDrift = async (log: Pick<EventLog, 'committed'>, q: Querier): Promise<StoreDrift> => {
  // the log first: a running processor writes its ledger before it commits, so a ledger read after the
  // committed offsets is never behind them unless the store lost data
  const committed = await Promise.all(
    PROJECTIONS.map(async (p) => ({ ...p, offsets: await log.committed(p.group, p.topic) })),
  );
  const ledger = await readLedger(q);
  const stored = new Map(ledger.map((l) => [`${l.projection}/${l.topic}/${l.partition}`, l.nextOffset]));
  const behind: BehindPosition[] = [];
  for (const { group, topic, offsets } of committed)
    for (const [partition, at] of offsets) {
      const held = stored.get(`${group}/${topic}/${partition}`) ?? 0;
      if (at > held) behind.push({ projection: group, topic, partition, committed: at, stored: held });
    }
  const totals = await trialTotals(q);
  const damaged = totals.trials !== totals.folded || totals.trials !== totals.summarized;
  const trialsCommitted = committed.find((c) => c.group === 'passk-trials')!.offsets;
  const marker = markerOf(totals, trialsCommitted);
  const known = damaged && stored.get(`${marker.projection}/${marker.topic}/${marker.partition}`) === marker.nextOffset;
  return { behind, totals, damaged, known, trialsCommitted };
};

/** What is wrong, one line each, for `passk process`, `passk rebuild` and `passk check`. */
export const describeDrift = (d: StoreDrift): string[] => {
  const lines: string[] = [];
  const byGroup = new Map<string, BehindPosition[]>();
  for (const b of d.behind) byGroup.set(b.projection, [...(byGroup.get(b.projection) ?? []), b]);
  for (const [group, list] of byGroup) {
    const missing = list.reduce((n, b) => n + (b.committed - b.stored), 0);
    lines.push(`${group}: ${missing} record(s) of ${list[0]!.topic} processed, not in the store`);
  }
  if (d.damaged) {
    const t = d.totals;
    lines.push(
      `trials ${t.trials}, row_state ${t.folded}, version_summaries ${t.summarized} attempts: ` +
        (d.known ? 'the log itself gives these (a rebuild changed nothing)' : 'a part of the store is lost'),
    );
  }
  return lines;
};
