import { sha256Text } from '../../schemas/sha256.ts';
import { contentHash } from '../importers/common.ts';

/**
 * The normalized text of an input: JSON (or a string holding a JSON object or array) as canonical JSON with
 * sorted keys; text as Unicode NFKC, lower case, with runs of whitespace made one space and the ends trimmed.
 */
export const normalizeInput = (input: unknown): string => {
  let value = input;
  if (typeof input === 'string') {
    const t = input.trim();
    if (t.startsWith('{') || t.startsWith('['))
      try {
        value = JSON.parse(t);
      } catch {
        value = input;
      }
  }
  const text = typeof value === 'string' ? value : canonical(value);
  // NFKC leaves ASCII as it is: only text with other characters pays for it
  return (NON_ASCII.test(text) ? text.normalize('NFKC') : text).toLowerCase().replace(/\s+/g, ' ').trim();
};

// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;

const canonical = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
};

/**
 * The fingerprint of an input: `fp-` and 24 hex digits of the SHA-256 of its normalized text. The sampler
 * fingerprints the *redacted* input, so two requests that differ only in an email or a phone number count as
 * the same request, and no personal data can be recovered from (or guessed against) a fingerprint.
 */
export const inputFingerprint = (input: unknown): string =>
  `fp-${sha256Text(normalizeInput(input), 'hex').slice(0, 24)}`;

/** Short content hash, for policy names. */
export const policyHash = (value: unknown): string => contentHash(value).slice(0, 8);
