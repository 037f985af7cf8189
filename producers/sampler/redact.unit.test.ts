import { describe, expect, it } from 'vitest';
import { DEFAULT_REDACTORS, patternRedactor, redactText, redactValue } from './redact.ts';

describe('redaction', () => {
  it.each([
    ['mail me at jane.doe+refunds@example.co.uk today', 'mail me at [EMAIL] today'],
    ['card 4111 1111 1111 1111 expired', 'card [CARD] expired'],
    ['card 4111-1111-1111-1111', 'card [CARD]'],
    ['amex 378282246310005.', 'amex [CARD].'],
    ['call (555) 123-4567 or 555-987-6543', 'call [PHONE] or [PHONE]'],
    ['uk +44 20 7946 0958 / +14155552671', 'uk [PHONE] / [PHONE]'],
    ['office 020 7946 0958', 'office [PHONE]'],
  ])('redacts %j', (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it.each([
    'order 1234567890123 is late', // 13 digits, fails Luhn: an order number, not a card
    'refund of 250 USD for order A-0042 placed 2024-05-20',
    'ticket 12345678',
  ])('leaves %j alone', (input) => {
    expect(redactText(input)).toBe(input);
  });

  it('takes custom redactors, and redacts every string of a JSON value', () => {
    const ssn = patternRedactor('ssn', /\b\d{3}-\d{2}-\d{4}\b/);
    const value = { note: 'ssn 123-45-6789, mail a@b.io', list: ['x@y.org', 7], 'z@q.com': true };
    expect(redactValue(value, [...DEFAULT_REDACTORS, ssn])).toEqual({
      note: 'ssn [SSN], mail [EMAIL]',
      list: ['[EMAIL]', 7],
      '[EMAIL]': true,
    });
  });
});
