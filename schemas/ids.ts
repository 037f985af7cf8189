import { createHash, randomBytes } from 'node:crypto';

/**
 * Event ids are ULIDs: 48 bits of event time (ms) then 80 bits of entropy, Crockford base32,
 * so they sort by time as strings. They are the idempotency key of every event.
 */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

const encodeTime = (ms: number): string => {
  let out = '';
  let t = Math.floor(ms);
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
};

const encodeRandom = (bytes: Uint8Array): string => {
  // 80 bits -> 16 base32 characters
  let bits = 0n;
  for (let i = 0; i < 10; i++) bits = (bits << 8n) | BigInt(bytes[i]!);
  let out = '';
  for (let i = 0; i < 16; i++) {
    out = CROCKFORD[Number(bits & 31n)]! + out;
    bits >>= 5n;
  }
  return out;
};

/** A fresh, random event id whose time part is `atMs` (default: now). */
export const newEventId = (atMs: number = Date.now()): string => encodeTime(atMs) + encodeRandom(randomBytes(10));

/**
 * A deterministic event id: the same parts always give the same id, so a re-run of a crashed job
 * re-publishes the same ids and the processors count each attempt once.
 * The time part still comes from `atMs`, so ids remain time-sortable.
 */
export const deterministicEventId = (atMs: number, ...parts: readonly (string | number)[]): string => {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  return encodeTime(atMs) + encodeRandom(digest.subarray(0, 10));
};

const MAX_TIME = 2 ** 48 - 1;

/** The time part of an event id (epoch ms); throws on an id that is not a ULID. */
export const eventIdTime = (id: string): number => {
  if (id.length !== 26) throw new RangeError(`not a ULID (26 characters): ${id}`);
  let t = 0;
  for (const ch of id.slice(0, 10).toUpperCase()) {
    const v = CROCKFORD.indexOf(ch);
    if (v < 0) throw new RangeError(`not a ULID (invalid character ${JSON.stringify(ch)}): ${id}`);
    t = t * 32 + v;
  }
  if (t > MAX_TIME) throw new RangeError(`not a ULID (time part too large): ${id}`);
  return t;
};

export const EVENT_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
