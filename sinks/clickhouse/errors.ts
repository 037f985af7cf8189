import { ClickHouseError } from '@clickhouse/client';
import { PipelineError } from '../../schemas/errors.ts';

/**
 * Errors of the ClickHouse adapter. Each carries the decision the caller needs:
 * `retriable` (a retry can help), and for the sink whether a row was written or not.
 */

/** The embedded store's data directory is held by another process (chDB locks `<path>/status`). */
export class StoreLocked extends PipelineError {
  constructor(
    readonly path: string,
    /** The holder's pid (from the owner file, or chDB's `<path>/status`), when it is known and alive. */
    readonly pid: number | undefined,
    cause?: unknown,
  ) {
    super(
      `the store at ${path} is held by another passk process${pid === undefined ? '' : ` (pid ${pid})`}: ` +
        'wait for it to finish, or stop it, and try again',
      { retriable: false, cause },
    );
  }
}

/** The store could not be reached, or kept failing for a transient reason after every retry. */
export class SinkUnavailable extends PipelineError {
  constructor(message: string, cause?: unknown) {
    super(message, { retriable: true, cause });
  }
}

/**
 * The store's disk is full (ClickHouse `NOT_ENOUGH_SPACE`): the insert wrote nothing, no retry helps until space is
 * freed, and no row is to blame. Retriable (the backend is unavailable, not the data wrong): the consumer stops
 * uncommitted, and the same records are written again once there is space.
 */
export class StoreDiskFull extends SinkUnavailable {
  constructor(
    readonly table: string,
    cause?: unknown,
  ) {
    super(`the disk is full (ClickHouse: NOT_ENOUGH_SPACE) writing ${table}; nothing was written`, cause);
  }
}

/** The store refused rows for a reason a retry cannot fix, and they could not be dead-lettered either. */
export class SinkRejected extends PipelineError {
  constructor(
    message: string,
    readonly table: string,
    readonly rows: number,
    cause?: unknown,
  ) {
    super(message, { retriable: false, cause });
  }
}

/** A migration that was already applied has different statements now, or one failed. */
export class MigrationError extends PipelineError {
  constructor(message: string, cause?: unknown) {
    super(message, { retriable: false, cause });
  }
}

/** The sink was used after `close()`. */
export class SinkClosed extends PipelineError {
  constructor() {
    super('the ClickHouse sink is closed', { retriable: false });
  }
}

/**
 * Error types after which the same insert may succeed later (ClickHouse `ErrorCodes`):
 * overload, timeouts, network, replication/keeper trouble, and an insert whose outcome is unknown.
 */
const TRANSIENT_TYPES = new Set([
  'TIMEOUT_EXCEEDED',
  'SOCKET_TIMEOUT',
  'NETWORK_ERROR',
  'TOO_MANY_PARTS',
  'TOO_MANY_SIMULTANEOUS_QUERIES',
  'TOO_MANY_SIMULTANEOUS_INSERTS',
  'QUERY_WAS_CANCELLED',
  'ALL_CONNECTION_TRIES_FAILED',
  'ALL_REPLICAS_ARE_STALE',
  'NO_AVAILABLE_REPLICA',
  'TABLE_IS_READ_ONLY',
  'KEEPER_EXCEPTION',
  'UNKNOWN_STATUS_OF_INSERT',
  'CANNOT_SCHEDULE_TASK',
  'SERVER_OVERLOADED',
  'ABORTED',
]);

/** Error types that say the batch was too big: split it and try the halves. */
const TOO_LARGE_TYPES = new Set(['MEMORY_LIMIT_EXCEEDED', 'CANNOT_ALLOCATE_MEMORY', 'TOO_LARGE_STRING_SIZE']);

/**
 * Error types that blame the data of some row: split the batch to find it, write the rest,
 * and dead-letter that row with the reason. Any other refusal (unknown table, no permission,
 * read-only) is not about rows: the sink stops, so the consumer stops uncommitted.
 */
const BAD_ROW_TYPES = new Set([
  'INCORRECT_DATA',
  'TYPE_MISMATCH',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_BOOL',
  'CANNOT_PARSE_UUID',
  'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_READ_ARRAY_FROM_TEXT',
  'CANNOT_READ_ALL_DATA',
  'CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  'ARGUMENT_OUT_OF_BOUND',
  'TOO_LARGE_ARRAY_SIZE',
  'SIZES_OF_ARRAYS_DONT_MATCH',
  'SIZES_OF_NESTED_COLUMNS_ARE_INCONSISTENT',
  'ILLEGAL_COLUMN',
  'UNKNOWN_IDENTIFIER',
]);

export type Failure = 'transient' | 'too_large' | 'bad_rows' | 'disk_full' | 'fatal';

/**
 * Classifies a failed request from typed fields only (never message text):
 * a `ClickHouseError` by its `type`; anything else (socket errors, client timeouts, a dropped
 * connection) leaves the outcome unknown, so it is transient: the retry is made safe by the
 * insert deduplication token and the ReplacingMergeTree key.
 */
export const classifyFailure = (e: unknown): Failure => {
  const ch = asClickHouseError(e);
  if (!ch) return 'transient';
  if (TRANSIENT_TYPES.has(ch.type ?? '')) return 'transient';
  if (TOO_LARGE_TYPES.has(ch.type ?? '')) return 'too_large';
  if (BAD_ROW_TYPES.has(ch.type ?? '')) return 'bad_rows';
  if (ch.type === 'NOT_ENOUGH_SPACE') return 'disk_full';
  return 'fatal';
};

/**
 * The server's typed error, whichever copy of the class made it: chDB's connection throws the
 * `ClickHouseError` of its own `@clickhouse/client-common`, a different class object than the
 * one `@clickhouse/client` exports, so `instanceof` alone misses it. The fallback checks the same
 * typed fields: a numeric `code` string and an optional `type`.
 */
export const asClickHouseError = (e: unknown): { code: string; type: string | undefined } | undefined => {
  if (e instanceof ClickHouseError) return e;
  if (!(e instanceof Error)) return undefined;
  const { code, type } = e as Error & { code?: unknown; type?: unknown };
  return typeof code === 'string' && /^\d+$/.test(code) && (type === undefined || typeof type === 'string')
    ? { code, type }
    : undefined;
};

export const describeError = (e: unknown): string => {
  const ch = asClickHouseError(e);
  const message = e instanceof Error ? e.message : String(e);
  return ch ? `${ch.type ?? 'code ' + ch.code}: ${message}` : message;
};
