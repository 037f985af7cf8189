import { randomBytes } from 'node:crypto';
import { sha256Bytes } from './sha256.ts';

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

/** 40 bits (5 bytes from `at`) -> 8 base32 characters, most significant first. */
const encode40 = (bytes: Uint8Array, at: number): string => {
  // 40 bits fit a double exactly: no BigInt needed
  let bits = 0;
  for (let i = at; i < at + 5; i++) bits = bits * 256 + bytes[i]!;
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = CROCKFORD[bits % 32]! + out;
    bits = Math.floor(bits / 32);
  }
  return out;
};

// 80 bits -> 16 base32 characters (two runs of 40 bits: 40 is a multiple of 5, so the split changes nothing)
const encodeRandom = (bytes: Uint8Array): string => encode40(bytes, 0) + encode40(bytes, 5);

/** A fresh, random event id whose time part is `atMs` (default: now). */
export const newEventId = (atMs: number = Date.now()): string => encodeTime(atMs) + encodeRandom(randomBytes(10));

/**
 * A deterministic event id: the same parts always give the same id, so a re-run of a crashed job
 * re-publishes the same ids and the processors count each attempt once.
 * The time part still comes from `atMs`, so ids remain time-sortable.
 */
export const deterministicEventId = (atMs: number, ...parts: readonly (string | number)[]): string => {
  const digest = sha256Bytes(JSON.stringify(parts));
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
