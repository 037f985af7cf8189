import type { EventPublisher } from '../../processors/ports.ts';
import { EventTooLarge, InvalidEvent } from '../../schemas/errors.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { Backpressure, RecorderClosed, UnsentEvents } from './errors.ts';
import { DEFAULT_RETRY, type RetryPolicy, withRetry } from '../../schemas/retry.ts';

export interface BatcherOptions {
  readonly publisher: EventPublisher;
  /** Events per publish call. @default 500 */
  readonly maxBatch?: number;
  /** A partial batch waits at most this long before it is sent, ms. @default 200 */
  readonly maxWaitMs?: number;
  /** Unsent events held in memory; past it, `add` throws `Backpressure`. @default 100000 */
  readonly maxBuffered?: number;
  /** @default DEFAULT_RETRY */
  readonly retry?: RetryPolicy;
  readonly sleep?: (ms: number) => Promise<void>;
  /** A background send failed; its events stay buffered for the next flush. */
  readonly onError?: (error: unknown) => void;
}

export interface BatcherStats {
  /** Events made durable. */
  sent: number;
  /** publish() calls that succeeded. */
  batches: number;
  retries: number;
  /** Events the backend refused for their content (too large, invalid); their receipts rejected. */
  refused: number;
}

interface Pending {
  readonly event: PasskEvent;
  readonly trusted: boolean;
  readonly resolve: (id: string) => void;
  readonly reject: (e: unknown) => void;
  done: boolean;
}

export interface Batcher {
  /**
   * Buffers an event; the promise resolves with its id once it is durable. `trusted`: the event was parsed by its
   * schema and checked well-formed (`textProblem`) already, so the log need not validate it again (a batch of
   * trusted events only is published `trusted`).
   */
  add(event: PasskEvent, opts?: { readonly trusted?: boolean }): Promise<string>;
  flush(): Promise<void>;
  /** Flushes, then refuses more; unsent events come back in an `UnsentEvents` error. */
  close(): Promise<void>;
  readonly pending: number;
  readonly stats: Readonly<BatcherStats>;
}

/** A refusal of one event's content: isolate it (bisect the batch), and send the rest. */
const refusesContent = (e: unknown): boolean => e instanceof EventTooLarge || e instanceof InvalidEvent;

export const createBatcher = (opts: BatcherOptions): Batcher => {
  const maxBatch = opts.maxBatch ?? 500;
  const maxWaitMs = opts.maxWaitMs ?? 200;
  const maxBuffered = opts.maxBuffered ?? 100_000;
  const policy = opts.retry ?? DEFAULT_RETRY;
  const stats: BatcherStats = { sent: 0, batches: 0, retries: 0, refused: 0 };
  let queue: Pending[] = [];
  let draining: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const send = async (batch: Pending[]): Promise<void> => {
    try {
      const trusted = batch.every((p) => p.trusted);
      const events = batch.map((p) => p.event);
      await withRetry(() => opts.publisher.publish(events, trusted ? { trusted } : undefined), {
        policy,
        sleep: opts.sleep,
        onRetry: () => void stats.retries++,
      });
    } catch (e) {
      if (!refusesContent(e)) throw e;
      if (batch.length === 1) {
        batch[0]!.done = true;
        stats.refused++;
        batch[0]!.reject(e);
        opts.onError?.(e);
        return;
      }
      const mid = batch.length >> 1;
      await send(batch.slice(0, mid));
      await send(batch.slice(mid));
      return;
    }
    stats.sent += batch.length;
    stats.batches++;
    for (const p of batch) {
      p.done = true;
      p.resolve(p.event.event_id);
    }
  };

  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      try {
        await send(batch);
      } catch (e) {
        queue = [...batch.filter((p) => !p.done), ...queue]; // an outage loses nothing: back to the front
        throw e;
      }
    }
  };

  /** Starts a drain unless one runs; resolves when that drain ends, rejects with its error. */
  const kick = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    draining ??= drain().finally(() => {
      draining = undefined;
    });
    return draining;
  };

  const background = (): void => {
    kick().catch((e: unknown) => opts.onError?.(e));
  };

  const flush = async (): Promise<void> => {
    while (queue.length > 0 || draining) await kick();
  };

  return {
    add(event, addOpts) {
      if (closed) throw new RecorderClosed();
      if (queue.length >= maxBuffered) throw new Backpressure(queue.length);
      const receipt = new Promise<string>((resolve, reject) =>
        queue.push({ event, trusted: addOpts?.trusted === true, resolve, reject, done: false }),
      );
      receipt.catch(() => {}); // failures also surface on flush()/close() and onError: an ignored receipt must not crash the app
      if (queue.length >= maxBatch && !draining) background();
      else timer ??= setTimeout(background, maxWaitMs);
      return receipt;
    },
    flush,
    async close() {
      closed = true;
      try {
        await flush();
      } catch (e) {
        if (timer) clearTimeout(timer);
        const unsent = queue;
        queue = [];
        const error = new UnsentEvents(
          unsent.map((p) => p.event),
          e,
        );
        for (const p of unsent) p.reject(error);
        throw error;
      }
    },
    get pending() {
      return queue.length;
    },
    stats,
  };
};
