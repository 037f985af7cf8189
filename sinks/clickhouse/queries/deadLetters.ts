import { z } from 'zod';
import { select, type Querier } from './select.ts';

const LetterRow = z.object({
  id: z.string(),
  recorded_at: z.number(),
  stage: z.string(),
  source_topic: z.string(),
  source_partition: z.number(),
  source_offset: z.number(),
  target_table: z.string(),
  value_base64: z.string(),
  reason: z.string(),
});

/** A stored dead letter as people read it: where it came from, why, and the start of its bytes. */
export interface StoredDeadLetter {
  readonly id: string;
  readonly recorded_at: number;
  /** 'decode': a log record the processors could not decode or validate; 'sink': a row the store refused. */
  readonly stage: string;
  readonly source_topic: string;
  readonly source_partition: number;
  readonly source_offset: number;
  readonly target_table: string;
  readonly reason: string;
  readonly bytes: number;
  /** The first bytes as text, every byte that is not printable ASCII shown as `·`. */
  readonly preview: string;
}

export interface DeadLetterSummary {
  readonly total: number;
  readonly by_stage: Record<string, number>;
  /** Newest first, at most `limit`. */
  readonly letters: StoredDeadLetter[];
}

const PREVIEW_BYTES = 60;

/** Printable ASCII as it is, any other byte as `·`, so control characters and broken text stay visible. */
export const previewBytes = (bytes: Uint8Array, max = PREVIEW_BYTES): string => {
  const shown = [...bytes.subarray(0, max)].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '·')).join('');
  return bytes.length > max ? `${shown}…` : shown;
};

/** The store's dead letters (one per source position or refused row), newest first. */
export const deadLetters = async (client: Querier, opts: { limit?: number } = {}): Promise<DeadLetterSummary> => {
  const [counts, rows] = await Promise.all([
    select(
      client,
      z.object({ stage: z.string(), n: z.coerce.number() }),
      'SELECT stage, count() AS n FROM dead_letters FINAL GROUP BY stage ORDER BY stage',
    ),
    select(
      client,
      LetterRow,
      `SELECT id, toUnixTimestamp64Milli(recorded_at) AS recorded_at, stage, source_topic, source_partition,
              source_offset, target_table, value_base64, reason
       FROM dead_letters FINAL
       ORDER BY recorded_at DESC, id
       LIMIT {limit:UInt32}`,
      { limit: opts.limit ?? 100 },
    ),
  ]);
  return {
    total: counts.reduce((s, c) => s + c.n, 0),
    by_stage: Object.fromEntries(counts.map((c) => [c.stage, c.n])),
    letters: rows.map(({ value_base64, ...r }) => {
      const bytes = Buffer.from(value_base64, 'base64');
      return { ...r, bytes: bytes.length, preview: previewBytes(bytes) };
    }),
  };
};
