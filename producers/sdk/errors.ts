import type { PasskEvent } from '../../schemas/events/index.ts';
import { PipelineError } from '../../schemas/errors.ts';

/** More events are waiting than the recorder may hold: slow down, or flush and try again. */
export class Backpressure extends PipelineError {
  constructor(readonly buffered: number) {
    super(`the recorder already holds ${buffered} unsent events; await flush() before recording more`, {
      retriable: true,
    });
  }
}

/** The recorder was closed; nothing more can be recorded. */
export class RecorderClosed extends PipelineError {
  constructor() {
    super('the recorder is closed', { retriable: false });
  }
}

/**
 * Events that could not be made durable before close(). Nothing is dropped silently:
 * they are handed back here, so the caller can keep them (e.g. write them to a file and import it later).
 */
export class UnsentEvents extends PipelineError {
  constructor(
    readonly events: readonly PasskEvent[],
    cause: unknown,
  ) {
    super(`${events.length} events were not sent: ${cause instanceof Error ? cause.message : String(cause)}`, {
      retriable: cause instanceof PipelineError && cause.retriable,
      cause,
    });
  }
}
