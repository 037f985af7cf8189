import { describe, expect, it } from 'vitest';
import { createRng } from '../../processors/core/prng.ts';
import { redactText } from './redact.ts';
import { checkIdentity } from './trace.ts';

/**
 * Machine-made ids hold no one's data, and must come through untouched: a trace id the SDK makes (a UUID) that the
 * redactor refused failed that request, and a UUID in a text redacted as an IBAN changed the text. IBAN's mod 97 alone
 * passes one random run in 97, so before the country lengths one UUID in a few dozen held an "IBAN".
 */
const rng = createRng(20261204);
const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(rng.next() * 16)]).join('');
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(rng.next() * 4)]}${hex(3)}-${hex(12)}`;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = () => Array.from({ length: 26 }, () => CROCKFORD[Math.floor(rng.next() * 32)]).join('');

describe('machine-made ids', () => {
  const ids = [
    ...Array.from({ length: 5_000 }, uuid),
    ...Array.from({ length: 2_000 }, () => hex(32)),
    ...Array.from({ length: 2_000 }, ulid),
  ];

  it('are neither refused as identities nor changed in text', () => {
    const refused = ids.filter((id) => {
      try {
        checkIdentity('trace_id', id);
        return false;
      } catch {
        return true;
      }
    });
    expect(refused).toEqual([]);
    const changed = ids.filter((id) => redactText(`trace ${id} done`) !== `trace ${id} done`);
    expect(changed).toEqual([]);
  });
});

describe('digit runs inside a longer token', () => {
  it('are not national ids (a 1 MB hex token held a 15-digit run whose NIR key matched: one run in thirty)', () => {
    const token = '2e7479676745514b385ccdcea089adf65b40f9f2e6f78195b710293c602b215059565860404ae336c822ad413f69a78';
    expect(redactText(token)).toBe(token);
    expect(redactText('NIR 2 15 05 95 658 604 04')).toContain('[NATIONAL_ID]');
  });
});
