import { type CountryCode, findPhoneNumbersInText } from 'libphonenumber-js/max';

/** A redactor rewrites text, replacing what must not leave the process. */
export interface Redactor {
  readonly name: string;
  readonly redact: (text: string) => string;
}

/** A redactor from a pattern (made global) and a replacement. */
export const patternRedactor = (name: string, pattern: RegExp, replacement = `[${name.toUpperCase()}]`): Redactor => {
  const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  return { name, redact: (text) => text.replace(re, replacement) };
};

const luhn = (digits: string): boolean => {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
};

/** Email addresses, with non-ASCII local parts and domains (`josé@exämple.de`, `用户@例子.中国`). */
export const emailRedactor: Redactor = patternRedactor(
  'email',
  /[\p{L}\p{N}._%+'-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.[\p{L}]{2,}/u,
);

/** Payment card numbers: 13–19 digits, spaces, dots or dashes allowed between them, passing the Luhn check. */
export const cardRedactor: Redactor = {
  name: 'card',
  redact: (text) =>
    text.replace(/(?<![\d.])\d(?:[ .-]?\d){12,18}(?![\d])/g, (m) => {
      const digits = m.replace(/\D/g, '');
      return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? '[CARD]' : m;
    }),
};

const ibanValid = (iban: string): boolean => {
  const s = iban.replace(/ /g, '').toUpperCase();
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const c of moved) {
    const v = c >= 'A' && c <= 'Z' ? c.charCodeAt(0) - 55 : Number(c);
    rest = Number(`${rest}${v}`) % 97;
  }
  return rest === 1;
};

/** IBANs (two letters, two check digits, up to 30 more; grouped by spaces or not), checked with mod-97. */
export const ibanRedactor: Redactor = {
  name: 'iban',
  redact: (text) =>
    text.replace(/\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/gi, (m) => {
      // The longest prefix that checks out: the pattern may run on into the next word ("… 0130 00 today").
      for (let len = m.length; len >= 15; len--)
        if (/[A-Z0-9]/i.test(m[len - 1]!) && (len === m.length || m[len] === ' ') && ibanValid(m.slice(0, len)))
          return `[IBAN]${m.slice(len)}`;
      return m;
    }),
};

/** US social security numbers (123-45-6789; not area 000, 666 or 9xx, group 00 or serial 0000). */
export const ssnRedactor: Redactor = patternRedactor(
  'ssn',
  /\b(?!000|666|9\d\d)\d{3}[- ](?!00)\d{2}[- ](?!0000)\d{4}\b/,
);

/** Dates and times, which a phone finder of some region may take for a number: never redacted as phones. */
const DATE_LIKE =
  /^(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?$/;

/** Digits that continue an identifier (`INV-2024-000123`, `A_5551234567`): not a phone number. */
const IN_IDENTIFIER = /[\p{L}][\p{L}\p{N}]*[-_#/]?$/u;

/** Regions whose national formats (without a `+`) are looked for; international numbers are found for every region. */
const PHONE_REGIONS: readonly CountryCode[] = ['US', 'GB', 'FR', 'DE', 'IN', 'ES', 'IT', 'BR', 'JP', 'AU', 'NL', 'MX'];

/**
 * Phone numbers by libphonenumber-js (its metadata, valid numbers only): international (`+33 1 23 45 67 89`, and the
 * `0049 30 1234567` dialling prefix), and national formats of the regions above (`01 23 45 67 89`, `030 1234567`,
 * `98765 43210`), with the pattern below as a fallback for separated local numbers.
 */
export const libphonenumberRedactor: Redactor = {
  name: 'phone',
  redact: (text) => {
    // "00" before a country code is the international prefix: "+ " keeps every index in place.
    const probe = text.replace(/(^|[^\d])00(?=[1-9])/g, '$1+ ');
    const ranges: [number, number][] = [];
    for (const region of PHONE_REGIONS)
      for (const f of findPhoneNumbersInText(probe, { defaultCountry: region }))
        if (
          !DATE_LIKE.test(probe.slice(f.startsAt, f.endsAt).trim()) &&
          !IN_IDENTIFIER.test(probe.slice(0, f.startsAt))
        )
          ranges.push([f.startsAt, f.endsAt]);
    if (ranges.length === 0) return text;
    ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let out = '';
    let at = 0;
    for (const [start, end] of ranges) {
      if (end <= at) continue;
      const from = Math.max(start, at);
      // Extend back over a "00" prefix rewritten above.
      const realStart = from >= 2 && probe.slice(from - 2, from) === '+ ' ? from - 2 : from;
      out += text.slice(at, Math.max(realStart, at)) + '[PHONE]';
      at = end;
    }
    return out + text.slice(at);
  },
};

/**
 * Phone numbers: an international `+` number, or a local number written with the separators people use
 * ((555) 123-4567, 555-123-4567, 555.123.4567, 020 7946 0958). Bare digit runs are left alone, so
 * order numbers and amounts survive; 7 to 15 digits in all.
 */
export const phoneRedactor: Redactor = {
  name: 'phone',
  redact: (text) =>
    text.replace(/(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}\b|\+\d{7,15}\b/g, (m) => {
      const digits = m.replace(/\D/g, '');
      const separated = /[\s.()-]/.test(m) || m.startsWith('+');
      return separated &&
        digits.length >= 7 &&
        digits.length <= 15 &&
        (m.startsWith('+') || /^\(|^\d{2,4}[\s.-]\d{3,4}[\s.-]?\d{3,4}$|\)/.test(m.trim()))
        ? '[PHONE]'
        : m;
    }),
};

/** Emails, cards, IBANs and SSNs before phones: each would otherwise look like a phone number. */
export const DEFAULT_REDACTORS: readonly Redactor[] = [
  emailRedactor,
  cardRedactor,
  ibanRedactor,
  ssnRedactor,
  libphonenumberRedactor,
  phoneRedactor,
];

/** Percent-encoded text (`jane%40example.com`) decoded, when it is well formed; else as it is. */
const percentDecoded = (text: string): string => {
  if (!/%[0-9A-Fa-f]{2}/.test(text)) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * Redacts text. It is first NFKC-normalized (full-width digits and letters become ASCII, non-breaking and other
 * spaces become plain spaces) and percent-decoded, so `４１１１…`, `4111\u00a01111…` and `jane%40example.com` are
 * found as what they are.
 */
export const redactText = (text: string, redactors: readonly Redactor[] = DEFAULT_REDACTORS): string => {
  const normalized = percentDecoded(text.normalize('NFKC')).replace(/[\u00a0\u2000-\u200b\u202f\u205f\u3000]/g, ' ');
  const out = redactors.reduce((t, r) => r.redact(t), normalized);
  // Nothing found: the text is returned exactly as it was given.
  return out === normalized ? text : out;
};

/**
 * A JSON number that is personal data (a phone number with its country code, or a card number, given as a number)
 * becomes the redaction string. Amounts, counts, ids, dates and epoch times survive as numbers.
 */
const redactNumber = (n: number, redactors: readonly Redactor[]): number | string => {
  if (!Number.isInteger(n)) return n;
  const digits = BigInt(Math.abs(n)).toString();
  // Phones: 11–12 digits (a country code and the number); cards: 15–19 digits. Ten-digit epoch seconds and
  // thirteen-digit epoch milliseconds fall between, and survive.
  if (!((digits.length >= 11 && digits.length <= 12) || (digits.length >= 15 && digits.length <= 19))) return n;
  const red = redactText(digits.length <= 12 ? `+${digits}` : digits, redactors);
  return red !== (digits.length <= 12 ? `+${digits}` : digits) ? red : n;
};

/** Redacts every string and number inside a JSON-like value (keys too), leaving its shape. */
export const redactValue = (value: unknown, redactors: readonly Redactor[] = DEFAULT_REDACTORS): unknown => {
  if (typeof value === 'string') return redactText(value, redactors);
  if (typeof value === 'number') return redactNumber(value, redactors);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactors));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [redactText(k, redactors), redactValue(v, redactors)]),
    );
  return value;
};
