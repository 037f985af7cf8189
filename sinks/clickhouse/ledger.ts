import { z } from 'zod';
import { select, type Querier } from './queries/select.ts';
import { toDateTime64 } from './time.ts';
import { NOT_RETRACTED } from './queries/retracted.ts';

/** A log position a projection (consumer group) has made durable in the store. */
export interface LedgerPosition {
  readonly projection: string;
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: number;
}

const Row = z.object({ projection: z.string(), topic: z.string(), partition: z.number(), next_offset: z.number() });

/** `store_positions` as rows of the ledger: the highest next_offset per (projection, topic, partition). */
export const ledgerRows = (positions: readonly LedgerPosition[], now: number = Date.now()) =>
  positions.map((p) => ({
    projection: p.projection,
    topic: p.topic,
    partition: p.partition,
    next_offset: p.nextOffset,
    written_at: toDateTime64(now),
  }));

/** The ledger as it stands: per (projection, topic), the next offset of every partition the store holds. */
export const readLedger = async (q: Querier): Promise<LedgerPosition[]> =>
  (
    await select(
      q,
      Row,
      `SELECT projection, topic, partition, max(next_offset) AS next_offset FROM store_positions FINAL
       GROUP BY projection, topic, partition ORDER BY projection, topic, partition`,
    )
  ).map((r) => ({ projection: r.projection, topic: r.topic, partition: r.partition, nextOffset: r.next_offset }));

const Totals = z.object({ trials: z.number(), folded: z.number(), summarized: z.number() });

/**
 * Cheap totals that agree whenever the trial projection is whole: distinct trials stored, attempts the row
 * states hold, attempts the version summaries hold. A lost part of one of the three tables makes them differ.
 */
export const trialTotals = async (q: Querier): Promise<z.infer<typeof Totals>> =>
  (
    await select(
      q,
      Totals,
      `SELECT (SELECT count() FROM trials FINAL WHERE ${NOT_RETRACTED}) AS trials,
              (SELECT toUInt64(sum(n + ungraded)) FROM row_state FINAL) AS folded,
              (SELECT toUInt64(sum(trials + ungraded)) FROM version_summaries FINAL) AS summarized`,
    )
  )[0]!;
