/** A redactor rewrites text, replacing what must not leave the process. */
export interface Redactor {
  readonly name: string;
  readonly redact: (text: string) => string;
}

/** A part of a text to replace: [start, end) and what goes there. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly label: string;
}

/** The text with each span replaced by its label; spans overlapping an earlier one are left out. */
export const replaceSpans = (text: string, spans: readonly Span[]): string => {
  if (spans.length === 0) return text;
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const s of sorted) {
    if (s.start < at) continue;
    out += text.slice(at, s.start) + s.label;
    at = s.end;
  }
  return out + text.slice(at);
};

/** A redactor from a function that finds spans. */
export const spanRedactor = (name: string, find: (text: string) => Span[]): Redactor => ({
  name,
  redact: (text) => replaceSpans(text, find(text)),
});

export const isDigit = (c: number): boolean => c >= 48 && c <= 57;
export const isAsciiLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Letters and digits of any script (one code unit; a surrogate half counts as a letter). */
export const isWordChar = (c: number): boolean =>
  isDigit(c) ||
  isAsciiLetter(c) ||
  c === 95 ||
  (c > 127 && /[\p{L}\p{N}\p{M}]/u.test(String.fromCharCode(c))) ||
  (c >= 0xd800 && c <= 0xdfff);

/** Up to `n` characters before `at`, lower case: what a context rule reads. */
export const before = (text: string, at: number, n: number): string =>
  text.slice(Math.max(0, at - n), at).toLowerCase();

/** Up to `n` characters from `at`, lower case. */
export const after = (text: string, at: number, n: number): string => text.slice(at, at + n).toLowerCase();

export const luhn = (digits: string): boolean => {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
};

export const digitsOf = (s: string): string => s.replace(/\D/g, '');

/**
 * Each match of a global pattern, in order, as `matchAll` gives them, without its per-call copy of the pattern (a
 * `matchAll` clones its regular expression: that copy cost more than the scan on the short strings most values are).
 */
export const eachMatch = (re: RegExp, text: string, fn: (m: RegExpExecArray) => void): void => {
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === '') re.lastIndex++;
    fn(m);
  }
  re.lastIndex = 0;
};
