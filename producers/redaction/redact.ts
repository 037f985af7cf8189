import { addressRedactor } from './address.ts';
import { emailRedactor } from './email.ts';
import { featuresOf, isBase64Char } from './features.ts';
import { normalizeForRedaction } from './normalize.ts';
import { cardRedactor, ibanRedactor, nationalIdRedactor, ssnRedactor } from './numbers.ts';
import { phoneRedactor } from './phone.ts';
import { secretRedactor } from './secrets.ts';
import type { Redactor } from './text.ts';

/**
 * Secrets first (a JWT or a key holds digit runs a phone finder would half-match), then emails, the numbers with
 * check digits (cards, IBANs, SSNs, national ids: each would otherwise look like a phone), phones, addresses.
 */
export const DEFAULT_REDACTORS: readonly Redactor[] = [
  secretRedactor,
  emailRedactor,
  cardRedactor,
  ibanRedactor,
  ssnRedactor,
  nationalIdRedactor,
  phoneRedactor,
  addressRedactor,
];

/** A redactor from a pattern (made global) and a replacement. */
export const patternRedactor = (name: string, pattern: RegExp, replacement = `[${name.toUpperCase()}]`): Redactor => {
  const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  return { name, redact: (text) => text.replace(re, replacement) };
};

const LABEL = /\[[A-Z][A-Z0-9_]*\]/g;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text a base64 run decodes to, when it is text (valid UTF-8, printable), else undefined. */
const decodedText = (run: string): string | undefined => {
  if (!/[0-9+/_-]/.test(run) && !/[A-Z]/.test(run.slice(1))) return undefined; // a plain long word
  if (/^[0-9a-f]+$/i.test(run) || run.replace(/=+$/, '').length % 4 === 1) return undefined; // hex, or not base64
  const bytes = Buffer.from(run, 'base64');
  if (bytes.length < 8) return undefined;
  let control = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b < 0x20 && b !== 9 && b !== 10 && b !== 13) || b === 0x7f) control++;
  }
  if (control > bytes.length / 50) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  const unprintable = text.match(/[\u0000-\u0008\u000e-\u001f\u007f-\u009f\ufffd]/g)?.length ?? 0;
  return unprintable <= text.length / 50 ? text : undefined;
};

const chain = (text: string, redactors: readonly Redactor[]): string => {
  let out = text;
  for (const r of redactors) out = r.redact(out);
  return out;
};

/**
 * Each maximal run of 16+ base64 characters and up to two `=` after it, in order: what the pattern
 * `/[A-Za-z0-9+/_-]{16,}={0,2}/g` matches, in one pass (the pattern, tried from every position of every word, cost
 * more than all the finders on prose).
 */
const replaceBase64Runs = (text: string, fn: (run: string) => string): string => {
  let out = '';
  let copied = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (!isBase64Char(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && isBase64Char(text.charCodeAt(j))) j++;
    if (j - i < 16) {
      i = j;
      continue;
    }
    let end = j;
    while (end < n && end - j < 2 && text.charCodeAt(end) === 61 /* = */) end++;
    const run = text.slice(i, end);
    const replaced = fn(run);
    if (replaced !== run) {
      out += text.slice(copied, i) + replaced;
      copied = end;
    }
    i = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
};

/** Base64 runs that decode to text holding personal data: the whole run becomes the labels of what it held. */
const redactBase64 = (text: string, redactors: readonly Redactor[]): string =>
  replaceBase64Runs(text, (run) => {
    const decoded = decodedText(run);
    if (decoded === undefined) return run;
    const normalized = normalizeForRedaction(decoded);
    const out = chain(normalized, redactors);
    if (out === normalized) return run;
    const had = new Set(normalized.match(LABEL) ?? []);
    return [...new Set((out.match(LABEL) ?? []).filter((l) => !had.has(l)))].join(' ') || '[REDACTED]';
  });

/**
 * Redacts text. It is first normalized (normalize.ts: NFKC, invisible characters, percent, JSON and HTML escapes),
 * so `４１１１…`, `jane%40example.com`, `jane&#64;example.com` and `j\u200bane@example.com` are found as what they
 * are; base64 runs that decode to text are looked into. Nothing found: the text comes back exactly as it was given;
 * else the normalized text with each finding replaced by its label (`[EMAIL]`, `[PHONE]`, …).
 */
export const redactText = (text: string, redactors: readonly Redactor[] = DEFAULT_REDACTORS): string => {
  if (text.length > SHORT) return redactNow(text, redactors);
  // Short strings (JSON keys, roles, segments, versions) repeat: one found clean is not looked at again (only clean
  // ones are remembered, so the memory holds no personal data).
  let clean = cleanShort.get(redactors);
  if (!clean) cleanShort.set(redactors, (clean = new Set()));
  if (clean.has(text)) return text;
  const out = redactNow(text, redactors);
  if (out === text) {
    if (clean.size >= CLEAN_MEMO_SIZE) clean.clear();
    clean.add(text);
  }
  return out;
};

/** Strings this long or shorter are remembered when clean, at most CLEAN_MEMO_SIZE per list of redactors. */
const SHORT = 32;
const CLEAN_MEMO_SIZE = 10_000;
const cleanShort = new WeakMap<readonly Redactor[], Set<string>>();

const redactNow = (text: string, redactors: readonly Redactor[]): string => {
  const normalized = normalizeForRedaction(text);
  let out = chain(normalized, redactors);
  if (featuresOf(out).base64Run) out = redactBase64(out, redactors);
  return out === normalized ? text : out;
};

/** The labels of what `redactText` finds in a text (`['[EMAIL]']`), none when it holds no personal data. */
export const personalDataIn = (text: string, redactors: readonly Redactor[] = DEFAULT_REDACTORS): string[] => {
  const out = redactText(text, redactors);
  if (out === text) return [];
  const had = new Set(text.match(LABEL) ?? []);
  return [...new Set((out.match(LABEL) ?? []).filter((l) => !had.has(l)))];
};

/** Keys whose values are contact data or ids: their words give a bare value the context it lacks. */
const KEY_HINT =
  /phone|tel|mobile|cell|fax|whatsapp|msisdn|contact|ssn|social|sin\b|itin|tax|national|aadhaar|nino|cpf|dni|card|iban|account|email|mail/i;

/**
 * Keys that name a secret, with the shortest value taken for one: the field-name half of `secrets.ts`'s `NAMED_SECRET`
 * and `NAMED_KEY`, which find `password=…` in a text. A parsed JSON value has lost the `"password": "` around it.
 */
const SECRET_KEY = /password|passwd|pwd|passphrase|secret/i;
const KEY_KEY =
  /api_?key|apikey|access_?key|access_?token|auth_?token|refresh_?token|id_?token|private_?key|secret_?key|client_?secret|session_?token/i;

/** A string under a key: redacted with the key's words before it, so `{"phone": "4155552671"}` is found. */
const redactUnderKey = (key: string, value: string, redactors: readonly Redactor[]): string => {
  if (
    key.length <= 64 &&
    !(value.startsWith('[') && value.endsWith(']')) &&
    ((SECRET_KEY.test(key) && value.length >= 3) || (KEY_KEY.test(key) && value.length >= 8)) &&
    redactors.some((r) => r.name === 'secret')
  )
    return '[SECRET]';
  if (key.length > 64 || !KEY_HINT.test(key)) return redactText(value, redactors);
  const prefix = `${key.replace(/[_.-]+/g, ' ')}: `;
  const out = redactText(prefix + value, redactors);
  return out.startsWith(prefix)
    ? out === prefix + value
      ? value
      : out.slice(prefix.length)
    : redactText(value, redactors);
};

/**
 * A JSON number that is personal data becomes the redaction string: a phone number with its country code (11–15
 * digits, valid for its region), a card (15–19 digits, Luhn), or any number under a key that names what it is (`"phone": 4155552671`,
 * `"ssn": 123456789`). Amounts, counts, ids, dates and epoch times survive as numbers.
 */
const redactNumber = (n: number, redactors: readonly Redactor[], key?: string): number | string => {
  if (!Number.isSafeInteger(n) || n < 1_000_000) return n;
  const digits = String(n);
  if (key !== undefined && KEY_HINT.test(key)) {
    const out = redactUnderKey(key, digits, redactors);
    if (out !== digits) return out;
  }
  // a phone number with its country code, E.164 without the "+" (up to 15 digits), valid for its region
  if (digits.length >= 11 && digits.length <= 15) {
    const out = redactText(`+${digits}`, redactors);
    if (out !== `+${digits}`) return out;
  }
  if (digits.length >= 15) {
    const out = redactText(digits, redactors);
    return out !== digits ? out : n;
  }
  return n;
};

export interface RedactValueOptions {
  /**
   * Strings longer than this are clipped (to this many characters, and a note of how many more there were) before
   * they are redacted: the work is bounded whatever a request carries. @default no clipping
   */
  readonly maxChars?: number;
  /**
   * Characters redacted in all, over the value's strings and keys in order; past it, strings are cut to nothing
   * but the note of their length. @default no limit
   */
  readonly budget?: number;
}

/** Clipped to `max` characters, with how many more there were. */
export const clipText = (s: string, max: number | undefined): string =>
  max === undefined || s.length <= max ? s : `${s.slice(0, max)}…[${s.length - max} more characters]`;

/** Redacts every string and number inside a JSON-like value (keys too), leaving its shape. */
export const redactValue = (
  value: unknown,
  redactors: readonly Redactor[] = DEFAULT_REDACTORS,
  opts: RedactValueOptions = {},
): unknown => {
  let left = opts.budget ?? Infinity;
  const clipped = (s: string): string => {
    const out = clipText(s, Math.min(opts.maxChars ?? Infinity, left));
    left = Math.max(0, left - Math.min(s.length, opts.maxChars ?? Infinity));
    return out;
  };
  const walk = (v: unknown, key: string | undefined): unknown => {
    if (typeof v === 'string') {
      const s = clipped(v);
      return key === undefined ? redactText(s, redactors) : redactUnderKey(key, s, redactors);
    }
    if (typeof v === 'number') return redactNumber(v, redactors, key);
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [redactText(clipText(k, opts.maxChars), redactors), walk(x, k)]),
      );
    return v;
  };
  return walk(value, undefined);
};
