import { contextBefore, contextWord, IDENTIFIER_WORDS } from './context.ts';
import { featuresOf, type TextFeatures } from './features.ts';
import { digitRuns } from './runs.ts';
import { eachMatch, isAsciiLetter, isDigit, luhn, type Span, spanRedactor } from './text.ts';

/**
 * Numbers that identify a person or an account, each checked by its own check digits so that order numbers and
 * barcodes of the same length survive: payment cards (Luhn, an issuer's first digit), IBANs (mod 97), US SSNs and
 * ITINs, and national ids (UK NINO, Canadian SIN, Indian Aadhaar and PAN, Spanish DNI and NIE, Italian codice
 * fiscale, Brazilian CPF, Chinese resident id, French NIR).
 */

/** GS1 check digit (EAN-13): a 13-digit number that is a barcode is not an (obsolete 13-digit) card. */
const gs1 = (d: string): boolean => {
  let sum = 0;
  for (let i = 0; i < d.length - 1; i++) sum += (d.charCodeAt(d.length - 2 - i) - 48) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10 === d.charCodeAt(d.length - 1) - 48;
};

/** The issuer's prefix and the length it issues (Visa, Mastercard, Amex, Diners, JCB, Discover, UnionPay, Maestro). */
const cardShape = (d: string): boolean => {
  const n = d.length;
  if (d[0] === '4') return n === 16 || n === 19 || (n === 13 && !gs1(d));
  if (/^(?:5[1-5]|2[2-7])/.test(d)) return n === 16;
  if (/^3[47]/.test(d)) return n === 15;
  if (/^3(?:0[0-5]|[68])/.test(d)) return n >= 14 && n <= 19;
  if (/^35/.test(d)) return n >= 16 && n <= 19;
  if (/^(?:6|5[06-9])/.test(d)) return n >= 16 && n <= 19;
  return false;
};

/** Cards: 13–19 digits, in groups joined by spaces, dashes, dots or underscores (two at most between groups). */
const findCards = (text: string): Span[] => {
  const spans: Span[] = [];
  if (featuresOf(text).cluster < 13) return spans;
  for (const run of digitRuns(text, ' -._', 2, 13)) {
    const g = run.groups;
    const len = (i: number) => g[i]![1] - g[i]![0];
    for (let s = 0; s < g.length; s++) {
      // cards are written in groups of 3 or more (4-4-4-4, 4-6-5), the last one maybe shorter
      if (len(s) < 3 && g.length > 1) continue;
      let count = 0;
      let best = -1;
      let digits = '';
      for (let e = s; e < g.length && count < 19; e++) {
        count += len(e);
        if (count > 19) break;
        if (count >= 13) {
          digits = text.slice(g[s]![0], g[e]![1]).replace(/\D/g, '');
          if (cardShape(digits) && luhn(digits)) best = e;
        }
        if (len(e) < 3 && e > s) break;
      }
      if (best < 0) continue;
      const start = g[s]![0];
      // an order or tracking number that happens to pass Luhn, written as one block, stays
      const word = s === best ? contextWord(text, start).word : undefined;
      if (word !== undefined && IDENTIFIER_WORDS.has(word)) continue;
      spans.push({ start, end: g[best]![1], label: '[CARD]' });
      s = best;
    }
  }
  return spans;
};
export const cardRedactor = spanRedactor('card', findCards);

const ibanValid = (chars: string): boolean => {
  let rest = 0;
  const moved = chars.slice(4) + chars.slice(0, 4);
  for (let i = 0; i < moved.length; i++) {
    const c = moved.charCodeAt(i);
    rest = c >= 65 ? (rest * 100 + (c - 55)) % 97 : (rest * 10 + (c - 48)) % 97;
  }
  return rest === 1;
};

/**
 * The length of an IBAN in each country that issues them (ISO 13616 registry). A candidate of another length, or of
 * a country code that issues none, is not an IBAN: mod 97 alone passes one random run in 97, so without this a UUID
 * or a hex id was taken for an IBAN now and then.
 */
const IBAN_LENGTH: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** Countries whose account number (the BBAN, after the check digits) is digits only; and the few that lead with a bank's letters. */
const NUMERIC_BBAN = new Set(
  'AE AT BA BE CZ DE DK EE ES FI FO GL HR HU IL IS LT ME NO PL PT RS SE SI SK TL TN XK'.split(' '),
);
const BANK_LETTERS_THEN_DIGITS: Readonly<Record<string, RegExp>> = {
  GB: /^[A-Z]{4}\d{14}$/,
  IE: /^[A-Z]{4}\d{14}$/,
  NL: /^[A-Z]{4}\d{10}$/,
};
/** Whether an IBAN candidate's account number has its country's shape (where the shape is known). */
const bbanShaped = (chars: string): boolean => {
  const country = chars.slice(0, 2);
  const bban = chars.slice(4);
  if (NUMERIC_BBAN.has(country)) return /^\d+$/.test(bban);
  return BANK_LETTERS_THEN_DIGITS[country]?.test(bban) ?? true;
};

/**
 * IBANs: a country's two letters, two check digits, then letters or digits to the country's length, grouped by
 * spaces, dots or dashes or not.
 */
const findIbans = (text: string): Span[] => {
  const spans: Span[] = [];
  if (featuresOf(text).run < 2) return spans; // the check digits
  const starts = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}/g;
  for (let m = starts.exec(text); m; m = starts.exec(text)) {
    let chars = m[0].toUpperCase();
    const want = IBAN_LENGTH[chars.slice(0, 2)];
    if (want === undefined) continue;
    const ends: number[] = [];
    let i = m.index + 4;
    while (i < text.length && chars.length < 34) {
      const c = text.charCodeAt(i);
      if (isDigit(c) || isAsciiLetter(c)) {
        chars += text[i]!.toUpperCase();
        i++;
        if (i >= text.length || !(isDigit(text.charCodeAt(i)) || isAsciiLetter(text.charCodeAt(i)))) ends.push(i);
        else ends.push(-1);
      } else if ((c === 32 || c === 46 || c === 45) && i + 1 < text.length && /[A-Za-z0-9]/.test(text[i + 1]!)) i++;
      else break;
    }
    for (let len = Math.min(chars.length, want); len >= want; len--) {
      // a prefix that ends inside a word does not count, except at the fixed length of a group of four
      const end = ends[len - 5];
      const inGroup = (len - 4) % 4 === 0 || end !== -1;
      if (!inGroup || !bbanShaped(chars.slice(0, len)) || !ibanValid(chars.slice(0, len))) continue;
      let stop = m.index;
      for (let seen = 0; seen < len; stop++) if (/[A-Za-z0-9]/.test(text[stop]!)) seen++;
      spans.push({ start: m.index, end: stop, label: '[IBAN]' });
      starts.lastIndex = stop;
      break;
    }
  }
  return spans;
};
export const ibanRedactor = spanRedactor('iban', findIbans);

/** US SSNs and ITINs (3-2-4, with dashes, spaces or dots), and any 9 digits after "SSN", "social security", "TIN". */
const SSN =
  /(?<![\d-])(?!000|666)(?:9\d\d[- .](?:5\d|6[0-5]|7\d|8[0-8]|9[0-24-9])|[0-8]\d\d[- .](?!00)\d\d)[- .](?!0000)\d{4}(?![\d-])/g;
const NINE_DIGITS = /(?<![\d.,-])\d{9}(?![\d.,-])/g;
const findSsns = (text: string): Span[] => {
  const spans: Span[] = [];
  if (featuresOf(text).cluster < 9) return spans;
  eachMatch(SSN, text, (m) => spans.push({ start: m.index, end: m.index + m[0].length, label: '[SSN]' }));
  eachMatch(NINE_DIGITS, text, (m) => {
    if (contextBefore(text, m.index) === 'id') spans.push({ start: m.index, end: m.index + 9, label: '[SSN]' });
  });
  return spans;
};
export const ssnRedactor = spanRedactor('ssn', findSsns);

const VERHOEFF_D = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VERHOEFF_P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 8, 5],
];
const verhoeff = (digits: string): boolean => {
  let c = 0;
  for (let i = 0; i < digits.length; i++)
    c = VERHOEFF_D[c]![VERHOEFF_P[i % 8]![digits.charCodeAt(digits.length - 1 - i) - 48]!]!;
  return c === 0;
};
const cpfValid = (d: string): boolean => {
  if (/^(\d)\1{10}$/.test(d)) return false;
  const check = (len: number) => {
    let sum = 0;
    for (let i = 0; i < len; i++) sum += (d.charCodeAt(i) - 48) * (len + 1 - i);
    const r = (sum * 10) % 11;
    return (r === 10 ? 0 : r) === d.charCodeAt(len) - 48;
  };
  return check(9) && check(10);
};
const cnIdValid = (id: string): boolean => {
  const w = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (id.charCodeAt(i) - 48) * w[i]!;
  const month = Number(id.slice(10, 12));
  const day = Number(id.slice(12, 14));
  return '10X98765432'[sum % 11] === id[17]!.toUpperCase() && month >= 1 && month <= 12 && day >= 1 && day <= 31;
};
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/**
 * One national id: its pattern (global), a check of what it matched, and the digits it needs (features.ts: adjacent
 * ones, `run`, or close together, `cluster`), so that a text without them is not scanned.
 */
const NATIONAL_IDS: readonly { re: RegExp; valid: (m: string) => boolean; needs: (f: TextFeatures) => boolean }[] = [
  // UK National Insurance number
  {
    re: /(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
    needs: (f) => f.cluster >= 6,
    valid: () => true,
  },
  // Canadian SIN, written 3-3-3
  {
    re: /(?<![\d-])[1-79]\d{2}[- ]\d{3}[- ]\d{3}(?![\d-])/g,
    valid: (m) => luhn(m.replace(/\D/g, '')),
    needs: (f) => f.cluster >= 9,
  },
  // Indian Aadhaar, written 4-4-4
  {
    re: /(?<![\d-])[2-9]\d{3}[- ]\d{4}[- ]\d{4}(?![\d-])/g,
    valid: (m) => verhoeff(m.replace(/\D/g, '')),
    needs: (f) => f.cluster >= 12,
  },
  // Indian PAN
  { re: /\b[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]\b/g, valid: () => true, needs: (f) => f.run >= 4 },
  // Spanish DNI and NIE
  {
    re: /\b(?:\d{8}|[XYZ][- ]?\d{7})[- ]?[A-Z]\b/g,
    needs: (f) => f.run >= 7,
    valid: (m) => {
      const s = m.replace(/[- ]/g, '');
      const n = Number(s.slice(0, -1).replace(/^X/, '0').replace(/^Y/, '1').replace(/^Z/, '2'));
      return DNI_LETTERS[n % 23] === s.slice(-1);
    },
  },
  // Italian codice fiscale
  {
    re: /\b[A-Za-z]{6}\d{2}[A-EHLMPR-Ta-ehlmpr-t]\d{2}[A-Za-z]\d{3}[A-Za-z]\b/g,
    needs: (f) => f.cluster >= 7,
    valid: () => true,
  },
  // Brazilian CPF, written 000.000.000-00
  {
    re: /(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])/g,
    valid: (m) => cpfValid(m.replace(/\D/g, '')),
    needs: (f) => f.cluster >= 11,
  },
  // Chinese resident identity card
  { re: /\b\d{17}[\dXx]\b/g, valid: cnIdValid, needs: (f) => f.run >= 17 },
  // French NIR (social security number), with its key; never a digit run inside a longer token (a hash, a hex id)
  {
    re: /(?<![A-Za-z0-9])[12] ?\d{2} ?(?:0[1-9]|1[0-2]) ?\d{2} ?\d{3} ?\d{3} ?\d{2}(?![A-Za-z0-9])/g,
    needs: (f) => f.cluster >= 13,
    valid: (m) => {
      const d = m.replace(/\D/g, '');
      return 97 - Number(BigInt(d.slice(0, 13)) % 97n) === Number(d.slice(13));
    },
  },
];
const findNationalIds = (text: string): Span[] => {
  const spans: Span[] = [];
  const f = featuresOf(text);
  if (f.run < 2) return spans;
  for (const { re, valid, needs } of NATIONAL_IDS)
    if (needs(f))
      eachMatch(re, text, (m) => {
        if (valid(m[0])) spans.push({ start: m.index, end: m.index + m[0].length, label: '[NATIONAL_ID]' });
      });
  return spans;
};
export const nationalIdRedactor = spanRedactor('national_id', findNationalIds);
