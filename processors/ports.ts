import type { EventCodec } from '../schemas/codec.ts';
import type { PasskEvent } from '../schemas/events/index.ts';
import type { Topic } from '../schemas/topics.ts';
import type { RowStateChanged, RunFinished, RunRetracted, TrialRecorded } from '../schemas/events/index.ts';
import type { VersionSnapshot } from './folds/versionSummary.ts';

export type { VersionSnapshot };

/**
 * Ports: what the processors need from the outside world. Adapters (log/, sinks/) implement them;
 * `deploy/` wires adapters to the topology. One contract test suite runs against every adapter.
 */

/** A record as it sits in the log, before decoding. */
export interface RawRecord {
  readonly topic: string;
  readonly partition: number;
  /** Offsets are integers below 2^53, kept as numbers. */
  readonly offset: number;
  readonly key: string;
  readonly value: Uint8Array;
  /** Append time, epoch ms (log time, not event time). */
  readonly timestamp: number;
}

/** A decoded, valid event with its position in the log. */
export interface LogEvent<E extends PasskEvent = PasskEvent> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  readonly event: E;
}

/** A dead letter: the original bytes and why they could not be processed. */
export interface DeadLetter {
  /**
   * Where it came from. A record of the log: its topic, partition and offset (its identity). A refusal of `passk
   * ingest` (no log position): the ingest path as topic (`otlp:/v1/traces`), partition and offset -1, and `id`.
   */
  readonly source: { topic: string; partition: number; offset: number; key: string };
  readonly value: Uint8Array;
  readonly reason: string;
  /**
   * The identity of a letter that has no log position (ingest's refusals and evictions): the same refusal of the
   * same bytes has the same id, so a re-sent request is dead-lettered once. Absent for a log record's letter.
   */
  readonly id?: string;
}

export interface EventPublisher {
  /**
   * Appends events to their topics (`topicOf`) under their keys (`keyOf`).
   * The promise resolves once every event is durable (acknowledged); until then nothing is promised.
   * An event over the configured maximum size rejects the whole call with `EventTooLarge`.
   * A duplicate `event_id` is appended as written: de-duplication is the processors' job.
   * Calls may overlap: the events of a later call are appended after those of an earlier one with the
   * same key (the processors publish a unit's changelog while the one before it is in flight).
   * `trusted`: the events were built by the processors' folds (changelog records, decisions), so the
   * codec serializes them without validating them again (EventCodec.encode).
   */
  publish(events: readonly PasskEvent[], opts?: { readonly trusted?: boolean }): Promise<void>;
  /** Appends raw bytes as they are (tests, DLQ, replays of foreign data). */
  publishRaw(topic: Topic, records: readonly { key: string; value: Uint8Array }[]): Promise<void>;
  /**
   * Appends dead letters to the dead-letter topic (`DLQ_HEADERS`, as the consumers write theirs), each identity
   * (`id`, else the source position) once: a letter the topic already holds is not appended again. Resolves with
   * the letters appended, once they are durable (ingest's refusals and evictions).
   */
  publishDeadLetters(letters: readonly DeadLetter[]): Promise<number>;
  close(): Promise<void>;
}

/** A batch from one partition, in offset order. Malformed records were already dead-lettered. */
export interface EventBatch {
  readonly topic: string;
  readonly partition: number;
  readonly events: readonly LogEvent[];
  /** A batch of the dead-letter topic (a consumer of that topic alone): its letters, in order; `events` is empty. */
  readonly letters?: readonly DeadLetter[];
  /** Offset of the last record in the batch (valid or dead-lettered); commit `lastOffset + 1`. */
  readonly lastOffset: number;
  /** Offset the next append to this partition will get: lag = highWatermark - (lastOffset + 1). */
  readonly highWatermark: number;
  /**
   * With this batch the consumer has read every partition it owns to its end (as of the read): nothing more is there
   * for now (Kafka: each owned partition's last fetch reached its end; one nothing was read from is not known to be).
   */
  readonly caughtUp?: boolean;
}

/**
 * `ConsumerOptions.idleWaitMs` of a reader that closes once it reached a known end: its close waits at most this long
 * for a fetch in flight, instead of the second a long-lived consumer's idle fetch takes.
 */
export const READ_TO_END_WAIT_MS = 100;

export interface ConsumerOptions {
  readonly groupId: string;
  /**
   * The dead-letter topic is read alone (`[TOPICS.dlq]`): its batches carry `letters`, never events, and nothing
   * of it is dead-lettered again.
   */
  readonly topics: readonly Topic[];
  /** Where a partition with no committed offset starts: true = its first record, false = new records only. @default true */
  readonly fromBeginning?: boolean;
  /** Max records per batch. @default 1000 */
  readonly maxBatch?: number;
  /**
   * A group of its own for one reader that never commits (a restore, a global-table tail, a tool's read): the
   * consumer deletes the group when it closes, so no empty group is left behind per start. @default false
   */
  readonly transient?: boolean;
  /**
   * How long a fetch with nothing to return waits at the broker before it answers empty (Kafka's `maxWaitTimeInMs`;
   * the embedded log has no such wait and ignores it). `close()` waits for a fetch in flight, so a consumer idle at
   * its close holds the close this long: a reader that closes once it reached an end it knows (a restore, a tool's
   * read of a topic, a replay into the store) sets `READ_TO_END_WAIT_MS`, so its close is not held for a second on
   * every broker it fetches from (issue 28: 4–5 such closes one after another in every `passk process
   * --until-caught-up` that rebuilds its store). @default 1000 (long-lived consumers: fewer empty fetches)
   */
  readonly idleWaitMs?: number;
  /**
   * Where the listed partitions of a transient reader's one topic start, as if its group had committed them there
   * (`lag` and `committed` count from them); others start as `fromBeginning` says. A restore from a snapshot reads
   * the log from the offset the snapshot covers (passk.decisions, docs/reliability.md). Kafka: the group's offsets
   * are sought once it has joined (the group holds none). Only with `transient` and one topic.
   */
  readonly startAt?: ReadonlyMap<number, number>;
  /**
   * The records to decode, by key: the others are skipped (not decoded, not dead-lettered, not in `events`; the
   * batch's offsets still cover them). For a reader that wants a few records of a shared topic: the windows
   * topology's restore reads the snapshots of passk.rowstate, not its million row states.
   */
  readonly keys?: (key: string) => boolean;
  /**
   * With `keys`: every key it accepts starts with one of these (a version's row states, a candidate's records), so a
   * log with an index by key reads those keys' records alone and never looks at the others: the embedded log on
   * passk.rowstate and passk.decisions (its `records_*_by_key` indexes). The same records, in the same order, as the
   * scan `keys` alone makes. Kafka has no index by key: its consumer ignores this and scans.
   */
  readonly keyPrefixes?: readonly string[];
  /**
   * The topic holds records passk wrote itself (its changelog, read back at a restore): where the log can, a
   * RowStateChanged in the shape passk writes is decoded without the schema's check (`DecodeOptions.trusted`); any
   * other record is checked as always. The embedded log does; Kafka's consumer checks every record. @default false
   */
  readonly trusted?: boolean;
  /**
   * Called when this member is given partitions, before their first batch (restore state here).
   * Callbacks run inside `batches()`, between batches: the iterator must be pulled for them to run.
   */
  readonly onAssigned?: (assignment: readonly { topic: string; partition: number }[]) => Promise<void> | void;
  /**
   * Called when partitions are taken away (drop their state here). Embedded: before another member
   * can take them. Kafka: after the rebalance (kafkajs has no earlier hook), so the new owner may
   * already be reading; commits for them are refused. Not called by `close()`.
   */
  readonly onRevoked?: (assignment: readonly { topic: string; partition: number }[]) => Promise<void> | void;
  /**
   * Called with the records of a batch that could not be decoded or validated, once the log holds
   * their dead letters and before the batch is handed over (so they are stored before the batch is
   * committed; a replay calls it again with the same letters). A rejection ends `batches()`.
   */
  readonly onDeadLetters?: (letters: readonly DeadLetter[]) => Promise<void>;
}

export interface EventConsumer {
  /**
   * Batches in per-partition offset order. The next batch is not fetched until the caller asks,
   * so a slow caller pauses consumption (backpressure). Ends when `close()` is called.
   */
  batches(): AsyncIterable<EventBatch>;
  /**
   * Commits offsets the caller has made durable: the next read of that partition starts at `nextOffset`.
   * Rejects with `CommitRejected` (log/errors.ts; retriable: false) when this member no longer owns
   * one of the partitions; nothing of that call is committed.
   */
  commit(positions: readonly { topic: string; partition: number; nextOffset: number }[]): Promise<void>;
  /**
   * Appends `events` (as `EventPublisher.publish` does, to this consumer's log) and commits `positions` in one
   * transaction: both are durable or neither is. Only where the log can (the embedded log: one SQLite transaction,
   * so one fsync where publish then commit take two); absent on Kafka, where the caller publishes, then commits.
   * A commit refused because a partition moved (`CommitRejected`) still leaves the events appended, as publish
   * then commit would, and rejects with it. Whoever wraps `commit` (the store's ledger) must wrap this too.
   * It appends as `publisher` does: a caller that publishes elsewhere (a replay publishes nowhere) must not use it.
   */
  publishAndCommit?(
    events: readonly PasskEvent[],
    positions: readonly { topic: string; partition: number; nextOffset: number }[],
    opts?: { readonly trusted?: boolean },
  ): Promise<void>;
  /** The publisher whose appends `publishAndCommit` makes: the log's own. */
  readonly publisher?: EventPublisher;
  /** Committed position per partition (or undefined). */
  committed(topic: Topic): Promise<Map<number, number>>;
  /** Lag per partition: high watermark minus committed position. */
  lag(): Promise<{ topic: string; partition: number; lag: number }[]>;
  close(): Promise<void>;
}

export interface EventSource {
  consumer(options: ConsumerOptions): Promise<EventConsumer>;
  /**
   * passk.rowstate's keys in outline, read by the log's indexes without a walk of every key (the embedded log; absent
   * on Kafka, whose readers scan): what the gates' restore by key needs (`restoreSnapshotsOnly`). With `versions`
   * false its `versions` are left out (empty), and so are their seeks (one per version ever): the restore asks for them
   * only once a production window pins an agent's versions (`GateDecisionOptions.rowstateVersions`).
   */
  rowstateOutline?(o?: { readonly versions?: boolean }): Promise<RowstateOutline>;
  /**
   * The topics this log reads by key from an index (`ConsumerOptions.keyPrefixes` reads a key's records alone, not a
   * scan of the topic): the embedded log's passk.rowstate and passk.decisions; absent on Kafka.
   */
  readonly readsByKey?: readonly string[];
}

/**
 * passk.rowstate's keys as one consistent read sees them, below `ends`: the versions of every key that splits into
 * exactly four parts (`versionOfRowKey`), and every other key (snapshots, keys whose ids hold KEY_SEP), which a
 * restore by key decodes.
 */
export interface RowstateOutline {
  /** Per partition, the end (exclusive) the outline covers: everything below it, nothing above. */
  readonly ends: ReadonlyMap<number, number>;
  /**
   * The distinct versions (`suite␟dataset version␟agent version`) of the keys with exactly three separators (none when
   * asked without them).
   */
  readonly versions: readonly string[];
  /** The distinct keys with any other number of separators. */
  readonly odd: readonly string[];
  /**
   * Per partition, where a read of the `odd` keys may start (a partition absent: at 0): the lowest offset of each
   * snapshot key's latest record (`isSnapshotKey`: a snapshot supersedes the key's earlier ones, which compaction
   * would drop) and of each other odd key's first record. A log that writes a snapshot per period and per stop and
   * never compacts (the embedded log) would have a restore decode every snapshot ever written.
   */
  readonly oddFrom?: ReadonlyMap<number, number>;
}

/** One backend: a publisher and a source over the same log, plus its dead letters. */
export interface EventLog extends EventSource {
  readonly publisher: EventPublisher;
  readonly codec: EventCodec;
  /**
   * Reads the dead-letter topic from the start (tools and tests). It holds one letter per source
   * position: however many groups read a bad record, and however often, it is dead-lettered once.
   */
  deadLetters(): Promise<DeadLetter[]>;
  /**
   * A group's committed position per partition of `topic`, read without joining the group (the store's ledger is
   * compared with it at start and by `passk check`).
   */
  committed(groupId: string, topic: Topic): Promise<Map<number, number>>;
  close(): Promise<void>;
}

/** What the trial topology writes to the store, per durable unit. Idempotent: a replay writes the same rows. */
export interface TrialSink {
  writeTrials(unit: {
    trials: readonly TrialRecorded[];
    rowStates: readonly RowStateChanged[];
    finished: readonly RunFinished[];
    /** Retractions of runs, one per row (the store keeps them: its views leave the runs' trials out). */
    retracted?: readonly RunRetracted[];
    /** Snapshots of the versions this unit changed, taken when it was folded: the latest per (partition, version). */
    summaries?: readonly VersionSnapshot[];
  }): Promise<void>;
}
