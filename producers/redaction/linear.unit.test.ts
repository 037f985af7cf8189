import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactText, redactValue } from './redact.ts';
import { bigTokens } from './tokens.testkit.ts';

/**
 * Every pattern is linear: a 1 MB single token of each shape that makes a backtracking pattern quadratic is redacted
 * (a quadratic one took minutes on 1 MB: issue #25's 80 KB token held the server 10–16 s). No clock here: a
 * quadratic shape makes this file time out; `npm run bench -- redaction` times each shape.
 */
describe('redaction of 1 MB single tokens', () => {
  const tokens = bigTokens();
  // shapes that hold no personal data come back exactly as they were
  const unchanged = [
    'letters, no @',
    'digits',
    '@ signs',
    'local part, no domain',
    'hex',
    'digits and spaces',
    'digits and dashes',
    'digit groups',
    '+ and digits',
    'brackets and digits',
    'letters and digits',
    'percent escapes',
    'broken percent escapes',
    'spaces',
    'IBAN-like',
    'capitalized words',
    'full-width digits',
    'zero-width spaces',
  ];
  it.each(Object.keys(tokens))('%s', (shape) => {
    const token = tokens[shape]!;
    const out = redactText(token);
    if (unchanged.includes(shape)) expect(out === token).toBe(true);
    else expect(out.length).toBeLessThanOrEqual(token.length * 7);
  });
});

describe('planted personal data in random noise', () => {
  const noise = fc.string({
    unit: fc.constantFrom(...'ab7 -.@+(%/_Z1\u200b'.split('')),
    maxLength: 300,
  });
  it('an email, a phone and a card between any noise are never left readable', () => {
    fc.assert(
      fc.property(noise, noise, noise, (a, b, c) => {
        const out = redactText(`${a} jane.doe@example.com ${b} call +44 20 7946 0958 ${c} card 4111 1111 1111 1111 .`);
        expect(out).not.toContain('jane.doe');
        expect(out.replace(/\D/g, '')).not.toContain('79460958');
        expect(out.replace(/\D/g, '')).not.toContain('4111111111111111');
      }),
      { numRuns: 300 },
    );
  });

  it('redactValue stays within its budget, whatever the value holds', () => {
    const big = { a: 'x'.repeat(100_000), b: ['y'.repeat(50_000), 'z'.repeat(50_000)], c: 'jane@example.com' };
    const out = redactValue(big, undefined, { maxChars: 1_000, budget: 2_500 }) as typeof big;
    expect(out.a.startsWith('x'.repeat(1_000))).toBe(true);
    expect(out.b[1]).toBe(`${'z'.repeat(500)}…[49500 more characters]`);
    expect(out.c).toBe('…[16 more characters]');
  });
});
