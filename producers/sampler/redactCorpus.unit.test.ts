import { describe, expect, it } from 'vitest';
import { digitsOf, emails, secrets } from './piiCorpus.testkit.ts';
import { redactText, redactValue } from './redact.ts';

// ordinary numbers must survive
describe('PII corpus', () => {
  it(`has at least 200 values (${secrets.length + emails.length})`, () => {
    expect(secrets.length + emails.length).toBeGreaterThanOrEqual(200);
  });

  it('leaks none of them inside a sentence', () => {
    const leaks = secrets.filter((v) => {
      const out = redactText(`please contact ${v} today`);
      return digitsOf(out).includes(digitsOf(v).slice(-7));
    });
    expect(leaks).toEqual([]);
    const mailLeaks = emails.filter(
      (v) => redactText(`mail ${v} now`).includes('@') || redactText(`mail ${v}`).includes('%40'),
    );
    expect(mailLeaks).toEqual([]);
  });

  it('redacts phone and card numbers given as JSON numbers, in any field', () => {
    const out = redactValue({ anything: { deep: [4111111111111111, 14155552671] }, n: 3 }) as {
      anything: { deep: unknown[] };
      n: number;
    };
    expect(out.anything.deep.every((v) => typeof v === 'string' && v.startsWith('['))).toBe(true);
    expect(out.n).toBe(3);
  });

  it('leaves ordinary numbers alone: order ids, amounts, dates, times, counts', () => {
    const ordinary = [
      'order 1234567890123 is late',
      'refund of 250 USD for order A-0042 placed 2024-05-20',
      'ticket 12345678',
      'total 1,299.99 EUR',
      'shipped 20/05/2024 at 14:30',
      'invoice INV-2024-000123',
      'version 3.14.159',
      'qty 12, weight 3.5 kg',
      'order #98765',
      'tracking 1Z999AA10123456784',
    ];
    expect(ordinary.map((s) => redactText(s))).toEqual(ordinary);
    expect(redactValue({ amount: 129999, order: 4567, year: 2024, ts: 1717171717 })).toEqual({
      amount: 129999,
      order: 4567,
      year: 2024,
      ts: 1717171717,
    });
  });
});
