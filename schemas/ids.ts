import { createHash, randomBytes } from 'node:crypto';
import { decodeTime, ulid } from 'ulid';

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
export const newEventId = (atMs?: number): string =>
  atMs === undefined ? ulid() : encodeTime(atMs) + encodeRandom(randomBytes(10));

/**
 * A deterministic event id: the same parts always give the same id, so a re-run of a crashed job
 * re-publishes the same ids and the processors count each attempt once.
 * The time part still comes from `atMs`, so ids remain time-sortable.
 */
export const deterministicEventId = (atMs: number, ...parts: readonly (string | number)[]): string => {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  return encodeTime(atMs) + encodeRandom(digest.subarray(0, 10));
};

export const eventIdTime = (id: string): number => decodeTime(id);

export const EVENT_ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
