import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cardRedactor } from './numbers.ts';
import { findPhones } from './phone.ts';
import { redactText } from './redact.ts';
import { luhn } from './text.ts';

/**
 * A hex id that starts with digits (`2025550123abcdef`, `4111111111111111abc`) is one token, as `abc2025550123def` is:
 * neither a phone nor a card (before 05a7b54 it was redacted when the token started with the digits, so a random hex
 * token was redacted about one time in a hundred: linear.unit's 1 MB hex, 49d77ce). Only a hex id, though: the whole
 * token hex and HEX_ID_MIN (16) long or more, no `+` before it, no phone or card word before it. 05a7b54 skipped any
 * one-block number with a letter after it, so `call 4155550149now`, `+14155550149abc`, `card 4111111111111111exp`
 * leaked; they are found again. The other side too: a phone or a card followed by a space, punctuation or an
 * extension is found.
 */
const phoneOrCard = (text: string): boolean => findPhones(text).length > 0 || cardRedactor.redact(text) !== text;

const digits = fc.stringMatching(/^[0-9]{7,19}$/);
const letters = fc.stringMatching(/^[a-z]{1,8}$/);
/**
 * Letters glued after a number that make no hex id: one of them at least is past `f`. Not a unit (`4155550149kg`, `…s`
 * are quantities, phone.ts).
 */
const wordLetters = fc
  .tuple(fc.stringMatching(/^[a-z]{0,6}$/), fc.stringMatching(/^[g-z]$/), fc.stringMatching(/^[a-z]{0,6}$/))
  .map(([a, g, b]) => `${a}${g}${b}`)
  .filter(
    (w) =>
      !/^(?:kg|g|mg|lbs?|oz|km|m|cm|mm|mi|ft|px|pt|ms|s|secs?|mins?|h|hrs?|kb|mb|gb|tb|usd|eur|gbp|jpy|inr|units?|items?|pcs|times|x)$/.test(
        w,
      ),
  );
const hexLetters = (min: number) => fc.stringMatching(new RegExp(`^[a-f]{${min},24}$`));
const hexToken = fc.stringMatching(/^[0-9a-f]{16,64}$/).filter((t) => /[a-f]/.test(t));

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
/** A valid US number as one block of ten digits. */
const bare = fc
  .tuple(fc.constantFrom('202555', '415555', '312555', '617555'), fc.stringMatching(/^01[0-9]{2}$/))
  .map(([head, tail]) => head + tail);
/** Words that say a number is a phone (context.ts) or a card, as people write them before it. */
const phoneWord = fc.constantFrom('call ', 'text me at ', 'tel=', 'phone ', 'Mobile: ', 'whatsapp ');
const cardWord = fc.constantFrom('card ', 'Card: ', 'cc ', 'visa ', 'credit card number ');

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
  it('after a letter, is neither a phone nor a card: inside a token', () => {
    fc.assert(
      fc.property(digits, letters, (d, l) => {
        for (const text of [`q${d}${l}`, `id abc${d} ok`, `(x${d}${l})`]) expect(phoneOrCard(text), text).toBe(false);
      }),
    );
  });

  it('that begins a hex id (all hex, 16+ characters), is neither: a hex token comes back unchanged', () => {
    fc.assert(
      fc.property(hexToken, (t) => {
        expect(phoneOrCard(t), t).toBe(false);
        expect(phoneOrCard(`token ${t}.`), t).toBe(false);
      }),
    );
    fc.assert(
      fc.property(bare, card, hexLetters(6), (p, c, h) => {
        for (const text of [`${p}${h}`, `${c}${h}`, `id ${p}${h} ok`, `(${c}${h})`, `${p}${h.toUpperCase()}`])
          expect(phoneOrCard(text), text).toBe(false);
      }),
    );
    expect(phoneOrCard('2025550123abcdef')).toBe(false);
    expect(phoneOrCard('4111111111111111abc')).toBe(false);
  });

  it('that is no hex id (a letter past f, under 16 characters, a "+" before), is still a phone or a card', () => {
    fc.assert(
      fc.property(bare, card, wordLetters, hexLetters(1), (p, c, w, h) => {
        const texts = [`${p}${w}`, `call ${p}${w}`, `${c}${w}`, `card ${c}${w} 12/25`, `+1${p}${h}`, `+1${p}${w}`];
        if (p.length + h.length < 16) texts.push(`${p}${h}`, `note ${p}${h}.`);
        for (const text of texts) expect(phoneOrCard(text), text).toBe(true);
      }),
    );
  });

  it('with a phone or a card word before it, is a phone or a card even if it could begin a hex id', () => {
    fc.assert(
      fc.property(phoneWord, bare, hexLetters(6), (w, p, h) => {
        expect(findPhones(`${w}${p}${h}`), `${w}${p}${h}`).not.toEqual([]);
      }),
    );
    fc.assert(
      fc.property(cardWord, card, hexLetters(1), (w, c, h) => {
        expect(cardRedactor.redact(`${w}${c}${h}`), `${w}${c}${h}`).toContain('[CARD]');
      }),
    );
  });

  it('the shapes the review found leaking are redacted', () => {
    const shapes: [string, string][] = [
      ['+14155550149abc', '[PHONE]abc'],
      ['call 4155550149now', 'call [PHONE]now'],
      ['text me at 4155550149pls', 'text me at [PHONE]pls'],
      ['tel=4155550149name=John', 'tel=[PHONE]name=John'],
      ['phone 07700900123abc', 'phone [PHONE]abc'],
      ['card 4111111111111111exp 12/25', 'card [CARD]exp 12/25'],
      ['call 4155550149abcdef', 'call [PHONE]abcdef'],
    ];
    for (const [text, want] of shapes) expect(redactText(text), text).toBe(want);
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

  it('alone in brackets, is a phone when the bare number is one (10–12 digits, valid for a region)', () => {
    fc.assert(
      fc.property(bare, bare, (p, q) => {
        expect(redactText(`John Smith (${p}) called`)).toBe('John Smith [PHONE] called');
        expect(redactText(`(${p}) is my cell`)).toBe('[PHONE] is my cell');
        expect(redactText(`numbers: (${p}), (${q})`)).toBe('numbers: [PHONE], [PHONE]');
      }),
    );
  });

  it('alone in brackets, is no phone when the bare number is none (a unix time, a short count, a barcode)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000_000_000, max: 1_999_999_999 }), // unix times in seconds to 2033, as bare
        fc.stringMatching(/^[1-9][0-9]{6,8}$/),
        (ts, short) => {
          for (const text of [`at (${ts}) done`, `(${short}) rows`]) expect(findPhones(text), text).toEqual([]);
        },
      ),
    );
    expect(findPhones('(4006381333931) scanned')).toEqual([]); // an EAN-13 with its check digit
  });
});
