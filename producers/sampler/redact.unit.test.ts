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
    // a number with letters glued after it that make no hex id (05a7b54 left these alone)
    ['+14155550149abc', '[PHONE]abc'],
    ['call 4155550149now', 'call [PHONE]now'],
    ['text me at 4155550149pls', 'text me at [PHONE]pls'],
    ['tel=4155550149name=John', 'tel=[PHONE]name=John'],
    ['phone 07700900123abc', 'phone [PHONE]abc'],
    ['card 4111111111111111exp 12/25', 'card [CARD]exp 12/25'],
    // one block alone in brackets
    ['John Smith (4155550149) called', 'John Smith [PHONE] called'],
    ['(4155550149) is my cell', '[PHONE] is my cell'],
    ['numbers: (4155550149), (2025550123)', 'numbers: [PHONE], [PHONE]'],
  ])('redacts %j', (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it.each([
    'order 1234567890123 is late', // 13 digits, fails Luhn: an order number, not a card
    'refund of 250 USD for order A-0042 placed 2024-05-20',
    'ticket 12345678',
    // hex ids that start with digits: one token, as 'abc2025550123def' is
    '2025550123abcdef',
    '4111111111111111abc',
    'abc2025550123def',
    'span 4155550149abcdef0 ended',
    // one block in brackets that is no phone: a unix time, a short count
    'at (1733540000) done',
    '(1234567) rows',
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
