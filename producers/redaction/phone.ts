import { createRequire } from 'node:module';
import type * as Libphonenumber from 'libphonenumber-js/max';
import type { CountryCode } from 'libphonenumber-js/max';
import { contextBefore, type ContextKind } from './context.ts';
import { featuresOf } from './features.ts';
import { digitRuns } from './runs.ts';
import { type Span, spanRedactor } from './text.ts';

/**
 * Phone numbers. A cheap scan first: runs of digit groups (digits with spaces, dashes, dots, slashes or brackets
 * between them), 7 to 15 digits. Only those are looked at, and libphonenumber only for the few that need it:
 *
 * - the words before decide first (context.ts): "order", "ticket #", "amount", "lat" → not a phone; "call", "tel",
 *   "mobile", "whatsapp" → a phone, whatever the shape;
 * - shapes that are not phones: dates and times, decimals and amounts (`1234567.89`, `1,234,567`), versions
 *   (`10.0.19041.1`), coordinates, ZIP+4, numbers followed by a unit or preceded by a currency sign, digits glued to
 *   an identifier (`INV-2024-000123`) or beginning a hex id (`2025550123abcdef`: runs.ts), unix times in seconds or milliseconds, GS1 barcodes (EAN/UPC with their check
 *   digit);
 * - international numbers (`+…` or `00…`): valid for some region by libphonenumber's metadata (every region);
 * - numbers written in groups (`(555) 123-4567`, `06 12 34 56 78`, `030 1234567`): a phone by shape;
 * - bare digit runs: a valid national number of one of the regions `bareRegions` (a handful: the shape picks which
 *   to try, so at most three lookups).
 */
const DATE_LIKE =
  /^(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?:[ T/-]+\d{1,2}(?:[:.]\d{2}){0,2})?$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}(?: \d{1,4}){0,2}$/;
const DECIMAL = /^\d+[.,]\d+$/;
const THOUSANDS = /^\d{1,3}(?:,\d{3})+(?:\.\d+)?$|^\d{1,3}(?:\.\d{3})+(?:,\d+)?$|^\d{1,2}(?: \d{3})+$/;
const VERSION = /^\d{1,3}(?:\.\d+){2,}$/;
const DOTTED_PHONE = /^\d{2}(?:\.\d{2}){3,}$|^\d{3}\.\d{3}\.\d{4}$|^\d{2,4}\.\d{3,4}\.\d{3,4}$/;
const ZIP4 = /^\d{5}-\d{4}$/;
const UNIT_AFTER =
  /^ ?(?:%|‰|€|\$|£|¥|kg\b|g\b|mg\b|lbs?\b|oz\b|km\b|m\b|cm\b|mm\b|mi\b|ft\b|px\b|pt\b|ms\b|s\b|secs?\b|mins?\b|h\b|hrs?\b|kb\b|mb\b|gb\b|tb\b|usd\b|eur\b|gbp\b|jpy\b|inr\b|units?\b|items?\b|pcs\b|times\b|x\b|°)/i;
const CURRENCY_BEFORE = /[$€£¥₹₩₽] ?$|\b(?:usd|eur|gbp|jpy|inr|rs\.?) ?$/i;

type PhoneLib = typeof Libphonenumber;
let phoneLib: PhoneLib | undefined;
/**
 * libphonenumber-js with its metadata, loaded the first time a digit run needs it, synchronously through its CommonJS
 * build: imported as ES modules at start-up it was 93 modules and about 0.2 s of CPU in every command that can redact
 * (`passk run`, `import`, `serve`, their `--help` too), most of which never meet a number that needs it (about
 * 0.09 s when one does; docs/performance.md, "CLI start-up").
 */
const lib = (): PhoneLib => (phoneLib ??= createRequire(import.meta.url)('libphonenumber-js/max') as PhoneLib);

/** GS1 check digit (EAN-8, UPC-A, EAN-13, GTIN-14). */
const gs1 = (digits: string): boolean => {
  let sum = 0;
  for (let i = 0; i < digits.length - 1; i++) {
    const d = digits.charCodeAt(digits.length - 2 - i) - 48;
    sum += i % 2 === 0 ? d * 3 : d;
  }
  return (10 - (sum % 10)) % 10 === digits.charCodeAt(digits.length - 1) - 48;
};

/** Regions whose national numbers are looked for in bare digit runs (no `+`, no separators, no context). */
export const DEFAULT_BARE_REGIONS: readonly CountryCode[] = ['US', 'IN', 'CN', 'GB', 'FR', 'DE'];

const validIn = (digits: string, regions: readonly CountryCode[], allowed: readonly CountryCode[]): boolean =>
  regions.some((r) => allowed.includes(r) && lib().isValidPhoneNumber(digits, r));

/** Whether the bare digits are a valid national number of one of `regions`: the shape picks which to ask. */
const bareNational = (digits: string, regions: readonly CountryCode[]): boolean => {
  const n = digits.length;
  if (n < 10 || n > 12) return false;
  if (digits[0] === '0') return validIn(digits, ['GB', 'FR', 'DE', 'IT', 'NL', 'AU', 'JP', 'ES', 'BR', 'MX'], regions);
  if (n === 10 && /^[2-9]\d{2}[2-9]/.test(digits) && validIn(digits, ['US'], regions)) return true;
  if (n === 11 && digits[0] === '1' && /^1[2-9]\d{2}[2-9]/.test(digits) && validIn(digits, ['US'], regions))
    return true;
  if (n === 10 && /^[6-9]/.test(digits) && validIn(digits, ['IN'], regions)) return true;
  if (n === 11 && /^1[3-9]/.test(digits) && validIn(digits, ['CN'], regions)) return true;
  return regions
    .filter((r) => !['US', 'IN', 'CN', 'GB', 'FR', 'DE', 'IT', 'NL', 'AU', 'JP', 'ES', 'BR', 'MX'].includes(r))
    .some((r) => lib().isValidPhoneNumber(digits, r));
};

const validInternational = (digits: string): boolean => {
  const p = lib().parsePhoneNumberFromString(`+${digits}`);
  return p !== undefined && (p.isValid() || (digits.length >= 10 && p.isPossible() && p.country !== undefined));
};

export interface PhoneOptions {
  /** Regions whose national numbers are found as bare digit runs. @default DEFAULT_BARE_REGIONS */
  readonly bareRegions?: readonly CountryCode[];
}

/** Whether `candidate` (text[start, end)) is a phone number, given what is around it. */
const isPhone = (
  text: string,
  start: number,
  end: number,
  context: ContextKind,
  regions: readonly CountryCode[],
): boolean => {
  const candidate = text.slice(start, end);
  const digits = candidate.replace(/\D/g, '');
  const n = digits.length;
  if (n < 7 || n > 15 || context === 'not_personal') return false;
  const plus = candidate.startsWith('+');
  const doubleZero = !plus && /^00[1-9]/.test(digits) && !/[\s().-]/.test(candidate.slice(0, 2));
  if (DATE_LIKE.test(candidate) || DECIMAL.test(candidate)) return false;
  if (/\.\d{5,}/.test(candidate)) return false; // a fraction: coordinates, measurements
  if (context === 'phone') return true;
  if (CURRENCY_BEFORE.test(text.slice(Math.max(0, start - 5), start))) return false;
  if (UNIT_AFTER.test(text.slice(end, end + 7))) return false;
  if (/[\p{L}][\p{L}\p{N}]*[-_#/:]$/u.test(text.slice(Math.max(0, start - 16), start))) return false;
  if (/[\p{N}][-.,/]$/u.test(text.slice(Math.max(0, start - 2), start))) return false;
  if (plus || doubleZero) return validInternational(doubleZero ? digits.slice(2) : digits);
  // one block in brackets, `(4155550149)`, is the bare number: judged as one (a group needs another group to be a phone)
  const separated = !/^\(\d+\)$/.test(candidate) && /[\s().\-/]/.test(candidate);
  if (separated) {
    if (THOUSANDS.test(candidate) || ZIP4.test(candidate)) return false;
    if (VERSION.test(candidate) && !DOTTED_PHONE.test(candidate)) return false;
    if (candidate.includes('/') && !/^\(?\d{2,5}\)? ?\/ ?\d/.test(candidate)) return false;
    const groups = candidate.split(/[^\d]+/).filter(Boolean);
    if (/^\(\d{1,5}\)/.test(candidate)) return n >= 7;
    if (n === 7) return /^\d{3}[-. ]\d{4}$/.test(candidate);
    if (groups.length < 2 || groups.some((g, i) => g.length > 8 || (g.length === 1 && i > 0))) return false;
    return n >= 8 && n <= 13;
  }
  if (n === 10 && /^1\d{9}$/.test(digits) && Number(digits) < 2.2e9) return false; // unix time, seconds
  if (n === 13 && /^1\d{12}$/.test(digits)) return false; // unix time, milliseconds
  if ((n === 8 || n === 12 || n === 13 || n === 14) && gs1(digits) && digits[0] !== '0') return false;
  return bareNational(digits, regions);
};

/** Phone numbers in text (see above). */
export const findPhones = (text: string, opts: PhoneOptions = {}): Span[] => {
  const regions = opts.bareRegions ?? DEFAULT_BARE_REGIONS;
  const spans: Span[] = [];
  // 7+ digits with at most 3 separators between groups: one cluster of 7 (features.ts)
  if (featuresOf(text).cluster < 7) return spans;
  for (const run of digitRuns(text, ' -./()', 3, 7)) {
    const { groups } = run;
    const len = (i: number) => groups[i]![1] - groups[i]![0];
    // a long uniform run (`12-12-12-12-12-12-12…`, `123 123 123 …`) is a list or a pattern, not phone numbers
    if (groups.length > 6 && contextBefore(text, run.start) !== 'phone') {
      const sep = text.slice(groups[0]![1], groups[1]![0]);
      let uniform = true;
      for (let g = 1; g < groups.length && uniform; g++)
        uniform =
          (len(g) === len(0) || (g === groups.length - 1 && len(g) < len(0))) &&
          text.slice(groups[g - 1]![1], groups[g]![0]) === sep;
      if (uniform) continue;
    }
    let from = 0;
    while (from < groups.length) {
      // cheap checks first: a later group starts a number only after a space or a bracket, and with 2+ digits
      if (from > 0) {
        const sep = text.slice(groups[from - 1]![1], groups[from]![0]);
        if (len(from) === 1 || sep === '-' || sep === '.' || sep === '/') {
          from++;
          continue;
        }
      }
      let digits = 0;
      let last = from;
      while (last < groups.length && digits + len(last) <= 15) digits += len(last++);
      if (digits < 7) {
        from++;
        continue;
      }
      // a "+" or "(" just before the first group belongs to the number
      let start = groups[from]![0];
      while (start > 0 && groups[from]![0] - start < 2 && /[+(]/.test(text[start - 1]!)) start--;
      const context = contextBefore(text, start);
      let found = -1;
      for (let to = last - 1; to >= from && found < 0; to--) {
        let end = groups[to]![1];
        // a ")" after the digits closes the number's own "(" only (`(555) 123-4567`), not a bracket around it
        if (text[end] === ')' && text.slice(start, end).includes('(')) end++;
        if (isPhone(text, start, end, context, regions)) found = to;
      }
      if (found >= 0) {
        let end = groups[found]![1];
        if (text[end] === ')' && text.slice(start, end).includes('(')) end++;
        spans.push({ start, end, label: '[PHONE]' });
        from = found + 1;
      } else from++;
    }
  }
  return spans;
};

export const createPhoneRedactor = (opts: PhoneOptions = {}) => spanRedactor('phone', (text) => findPhones(text, opts));
export const phoneRedactor = createPhoneRedactor();
