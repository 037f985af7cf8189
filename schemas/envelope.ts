import { z } from 'zod';
import { EVENT_ID_PATTERN } from './ids.ts';

/** Every event carries this envelope. `event_id` is the idempotency key. */
/**
 * `schema_version` is the version of the event's schema the producer wrote with. It is a plain
 * integer on the wire (not a constant), so a reader of version N still accepts version N−1 data:
 * the registry's BACKWARD check then only sees the fields that really changed.
 */
export const envelope = <T extends string>(type: T) => ({
  event_id: z.string().regex(EVENT_ID_PATTERN, 'a ULID (26 Crockford base32 characters)'),
  type: z.literal(type),
  schema_version: z.number().int().min(1),
  /** Event time, epoch milliseconds. */
  occurred_at: z.number().int().nonnegative(),
  /** Who published it, e.g. `passk-runner/0.1.0`. */
  producer: z.string().min(1),
});

export const Id = z.string().min(1).max(512);
export const Tags = z.array(z.string().min(1));
