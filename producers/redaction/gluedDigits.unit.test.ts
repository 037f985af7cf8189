import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cardRedactor } from './numbers.ts';
import { findPhones } from './phone.ts';
import { luhn } from './text.ts';

/**
 * A run of digits glued to letters is part of a token (a hex id, a key), wherever the token starts. Before, the run
 * was left alone after a letter (`abc2025550123def`) but taken for a phone or a card when the token started with it
 * (`2025550123abc…`), so a random hex token was redacted about one time in a hundred (linear.unit's 1 MB hex, 49d77ce).
 * The other side: a phone or a card followed by a space, punctuation or an extension is still found.
 */
const phoneOrCard = (text: string): boolean => findPhones(text).length > 0 || cardRedactor.redact(text) !== text;

const digits = fc.stringMatching(/^[0-9]{7,19}$/);
const letters = fc.stringMatching(/^[a-z]{1,8}$/);
const hexToken = fc.stringMatching(/^[0-9a-f]{8,64}$/).filter((t) => /[a-f]/.test(t));

/** A Visa number: 15 random digits and the Luhn check digit. */
const card = fc.stringMatching(/^4[0-9]{14}$/).map((d) => {
  const check = [...'0123456789'].find((c) => luhn(d + c))!;
  return d + check;
});
/** Valid US numbers (libphonenumber), written as people write them. */
const phone = fc
  .tuple(fc.constantFrom('202555', '415555', '312555', '617555'), fc.stringMatching(/^01[0-9]{2}$/))
  .chain(([head, tail]) => {
    const d = head + tail;
    return fc.constantFrom(
      d,
      `(${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)}`,
      `${d.slice(0, 3)}-${d.slice(3, 6)}-${d.slice(6)}`,
      `+1 ${d.slice(0, 3)} ${d.slice(3, 6)} ${d.slice(6)}`,
    );
  });
/**
 * What may follow a number that is not glued to it: a space or punctuation and a word, the end, or an extension. The
 * words are not units (`5551234567 s`, `… kg` are quantities, phone.ts).
 */
const word = fc.constantFrom('please', 'thanks', 'or', 'and', 'today', 'is', 'ok', 'Call');
const after = fc.oneof(
  fc.constantFrom(' ', '.', ',', ';', ')', '\n', '!', '?').chain((s) => word.map((w) => `${s}${w}`)),
  fc.constant(''),
  fc.stringMatching(/^(?:x|ext|ext\.)[0-9]{1,4}$/),
);

describe('a digit run glued to letters', () => {
  it('is neither a phone nor a card, at a string’s start as inside a token', () => {
    fc.assert(
      fc.property(digits, letters, (d, l) => {
        for (const text of [`${d}${l}`, `q${d}${l}`, `id ${d}${l} ok`, `(${d}${l})`])
          expect(phoneOrCard(text), text).toBe(false);
      }),
    );
  });

  it('so a hex token comes back unchanged, whatever it starts with', () => {
    fc.assert(
      fc.property(hexToken, (t) => {
        expect(phoneOrCard(t), t).toBe(false);
        expect(phoneOrCard(`token ${t}.`), t).toBe(false);
      }),
    );
    expect(phoneOrCard('2025550123abcdef')).toBe(false);
    expect(phoneOrCard('4111111111111111abc')).toBe(false);
  });
});

describe('a phone or a card not glued to letters', () => {
  it('is a card, at the start, after words and before a space or punctuation', () => {
    fc.assert(
      fc.property(card, after, (c, a) => {
        for (const text of [`${c}${a}`, `card ${c}${a}`]) expect(cardRedactor.redact(text), text).toContain('[CARD]');
      }),
    );
  });

  it('is a phone, at the start, after words and before a space, punctuation or an extension', () => {
    fc.assert(
      fc.property(phone, after, (p, a) => {
        for (const text of [`${p}${a}`, `call me on ${p}${a}`]) expect(findPhones(text), text).not.toEqual([]);
      }),
    );
  });

  it('in brackets, is a phone: the ")" closes the bracket, not the number (found by the property above)', () => {
    expect(findPhones('(call me on 4155550149)')).toEqual([{ start: 12, end: 22, label: '[PHONE]' }]);
    expect(findPhones('4155550149), then')).toEqual([{ start: 0, end: 10, label: '[PHONE]' }]);
  });

  it('written in groups, is a phone even with letters right after', () => {
    expect(findPhones('202 555 0123abc')).not.toEqual([]);
    expect(findPhones('call (202) 555-0123or write')).not.toEqual([]);
  });
});
