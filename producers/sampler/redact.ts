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

/** Email addresses. */
export const emailRedactor: Redactor = patternRedactor(
  'email',
  /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/,
);

/** Payment card numbers: 13–19 digits, spaces or dashes allowed between them, passing the Luhn check. */
export const cardRedactor: Redactor = {
  name: 'card',
  redact: (text) =>
    text.replace(/\b\d(?:[ -]?\d){12,18}\b/g, (m) => {
      const digits = m.replace(/\D/g, '');
      return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? '[CARD]' : m;
    }),
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

/** Cards first: a card number would otherwise look like a phone number. */
export const DEFAULT_REDACTORS: readonly Redactor[] = [emailRedactor, cardRedactor, phoneRedactor];

export const redactText = (text: string, redactors: readonly Redactor[] = DEFAULT_REDACTORS): string =>
  redactors.reduce((t, r) => r.redact(t), text);

/** Redacts every string inside a JSON-like value (keys too), leaving its shape. */
export const redactValue = (value: unknown, redactors: readonly Redactor[] = DEFAULT_REDACTORS): unknown => {
  if (typeof value === 'string') return redactText(value, redactors);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactors));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [redactText(k, redactors), redactValue(v, redactors)]),
    );
  return value;
};
