import { z } from 'zod';
import { envelope } from '../envelope.ts';
import { ComparisonDeclared, ConfirmationRequested, RunClosed } from './comparisons.ts';
import { GateEvaluated } from './decisions.ts';

/** One comparison in a gate book: its declaration, where it stands, and what decided it (processors/folds/gates.ts). */
export const ComparisonState = z.object({
  declared: ComparisonDeclared,
  status: z.enum(['open', 'confirming', 'decided']),
  confirmation: ConfirmationRequested.optional(),
  verdict: GateEvaluated.optional(),
});
export type ComparisonState = z.infer<typeof ComparisonState>;

/** The gates' fold of one partition of passk.decisions (processors/folds/gates.ts, `foldBookInto`). */
/** When an entry of the book was made: the event time of the event that made it (`true`: a book from before horizons). */
const Stamp = z.union([z.literal(true), z.number()]);

export const GateBook = z.object({
  comparisons: z.record(z.string(), ComparisonState),
  /** suite␟candidate → event ids of its verdicts, in log order. */
  verdicts: z.record(z.string(), z.array(z.string())),
  /** suite␟candidate → the event time of each of its verdicts (a book with a horizon: it drops each past it). */
  verdicts_at: z.record(z.string(), z.array(z.number())).optional(),
  /** Production-window alerts raised (one per window), with the window's end. */
  alerts: z.record(z.string(), Stamp),
  /**
   * Comparisons decided and evicted from `comparisons` (the processors' books, `evictDecided`): only the id and the
   * verdict's event time stay, so a re-declaration of it within the horizon is still ignored.
   */
  decided: z.record(z.string(), Stamp).optional(),
  /**
   * suite␟agent version → its adaptive runs (`passk run --adaptive`, from their AdaptiveRoundDecided, keyed like
   * the comparisons): run id → dataset version and max-k. While one of a candidate's is open, its gate is sequential.
   */
  adaptive: z
    .record(
      z.string(),
      z.record(z.string(), z.object({ dataset_version: z.string(), max_k: z.number(), at: z.number().optional() })),
    )
    .optional(),
  /**
   * The latest event time folded: the clock of the horizon (kept only by a book folded with one); under the ids
   * horizon alone, the latest declaration's event time. Event time, not the wall clock, so a replay drops what the
   * live fold dropped.
   */
  at: z.number().optional(),
  /**
   * The alerts' clock under the alerts horizon (`FoldOptions.alertHorizonMs`): the latest WindowAlertRaised's event
   * time folded (its window's end). An alert older than it by the horizon is dropped.
   */
  alerts_at: z.number().optional(),
});
export type GateBook = z.infer<typeof GateBook>;

/**
 * A snapshot of one partition of passk.decisions as the gates fold it: the book (decided comparisons evicted to
 * their ids) and the partition's closed runs, exactly as folded from its records before `through_offset` and from
 * nothing else (never a decision not yet in the log). Written by the partition's owner every so many records and
 * at a clean stop, one compacted record per partition in passk.rowstate: a restore takes the latest and reads the
 * partition from `through_offset` on, and gets the book a replay from offset 0 gives (docs/reliability.md).
 */
export const GateBookSnapshot = z.object({
  ...envelope('GateBookSnapshot'),
  partition: z.number().int().nonnegative(),
  /** Partitions of passk.decisions when it was taken: a snapshot of another layout is not used. */
  partitions: z.number().int().positive(),
  /** The partition's records before this offset are folded in; none after. */
  through_offset: z.number().int().nonnegative(),
  /**
   * The horizon it was folded with, in ms (0: none; absent: schema version 1, from before horizons): what is older
   * than `book.at` minus it is dropped. A restore uses it only with a horizon no longer than this.
   */
  horizon_ms: z.number().int().nonnegative().optional(),
  book: GateBook,
  /** The partition's RunClosed (a global table: every instance's gates read them, whoever owns the partition). */
  closed: z.array(RunClosed),
  /**
   * suite␟agent version keys whose RunClosed the gates evicted (docs/processors.md, "Evicting versions from the row
   * tables"): left out of `closed`; a restore marks them evicted and reloads them from passk.decisions when a
   * comparison names them. Absent: none left out.
   */
  closed_evicted: z.array(z.string()).optional(),
  /**
   * The book was folded forgetting decided ids (`FoldOptions.forgetDecided`, the embedded log's gates): no `decided`,
   * and `verdicts` empty; both are looked up in passk.decisions by key. Only a restore that forgets too uses it (a
   * passk from before this field would use it as a book that keeps them: no downgrade). Absent: the ids are kept.
   */
  forgot_decided: z.literal(true).optional(),
  /**
   * The ids horizon it was folded with, in ms (`PASSK_GATE_ID_HORIZON_DAYS`, the gates that keep decided ids: Kafka):
   * decided and verdict ids older than `book.at` (the latest declaration's event time) minus it were dropped; nothing
   * else. A restore uses it only under an ids horizon no longer than this. Absent: none (ids kept, or looked up).
   */
  id_horizon_ms: z.number().int().positive().optional(),
  /**
   * The alerts horizon it was folded with, in ms (`PASSK_GATE_ID_HORIZON_DAYS` on both backends, without a horizon):
   * alerts older than `book.alerts_at` (the latest alert's event time) minus it were dropped. A restore uses it only
   * under an alerts horizon no longer than this; one without it (its alerts carry no time) only a restore without one.
   */
  alert_horizon_ms: z.number().int().positive().optional(),
  /** The latest RunClosed's event time folded (the closed runs' clock), when `closed` may no longer show it. */
  closed_at: z.number().optional(),
  /**
   * One of the records of a snapshot too large for one (over the log's `maxEventBytes`): the chunks share
   * `snapshot_id` (the whole snapshot's event id) and `count`, each holds some of the book's entries and closed
   * runs, and a restore joins them only once all `count` are read (folds/gateSnapshot.ts, `shelve`). Each chunk has
   * its own compacted key in one of two slots per partition (`gateBookChunkKey`), written alternately, so a crash
   * between chunks never overwrites the previous complete snapshot. Absent: the whole snapshot in one record.
   */
  chunk: z
    .object({
      snapshot_id: z.string(),
      index: z.number().int().nonnegative(),
      count: z.number().int().min(2),
      slot: z.enum(['a', 'b']),
    })
    .optional(),
});
export type GateBookSnapshot = z.infer<typeof GateBookSnapshot>;
