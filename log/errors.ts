import { PipelineError } from '../schemas/errors.ts';

/**
 * A commit for partitions this consumer no longer owns (its lease or group generation was taken
 * over after it stalled). Nothing of the call was committed; the new owner re-reads from the last
 * committed position, so the caller drops its state for these partitions and carries on.
 */
export class CommitRejected extends PipelineError {
  constructor(
    readonly partitions: readonly { topic: string; partition: number }[],
    cause?: unknown,
  ) {
    super(
      `commit rejected: partitions no longer owned by this consumer: ${partitions.map((p) => `${p.topic}[${p.partition}]`).join(', ')}`,
      {
        retriable: false,
        cause,
      },
    );
  }
}

/** A consumer was asked for something its log cannot do (e.g. consume the dead-letter topic as events). */
export class ConsumerMisuse extends PipelineError {
  constructor(message: string) {
    super(message, { retriable: false });
  }
}

/** The log backend refused a request for a reason retrying will not fix (e.g. a topic's size limit). */
export class LogRejected extends PipelineError {
  constructor(message: string, cause?: unknown) {
    super(message, { retriable: false, cause });
  }
}

/** The schema registry refused a schema (incompatible with the registered versions, or malformed). */
export class SchemaRejected extends PipelineError {
  constructor(
    readonly subject: string,
    message: string,
    cause?: unknown,
  ) {
    super(`schema registry refused ${subject}: ${message}`, { retriable: false, cause });
  }
}
