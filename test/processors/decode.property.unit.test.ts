import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCodec, validateEvent } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { MAX_NESTING, textProblem } from '../../schemas/wellFormed.ts';
import { anyBytes, base, deep } from '../helpers/poison.ts';

/**
 * Issue #13: whatever a record holds, decoding gives a valid event that every later stage can keep (it
 * re-encodes, stringifies, holds no lone surrogate, is not nested past MAX_NESTING), or an InvalidEvent with
 * a reason (the consumer dead-letters it). Never another error: one would halt the pipeline.
 */
describe('decode under arbitrary bytes', () => {
  it('gives an event every later stage can keep, or an InvalidEvent with a reason; never anything else', async () => {
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(anyBytes, async (bytes) => {
        try {
          const event = await jsonCodec.decode(bytes);
          valid++;
          expect(textProblem(event, MAX_NESTING)).toBeUndefined();
          const again = await jsonCodec.decode(await jsonCodec.encode(event));
          expect(again).toEqual(event);
          expect(() => JSON.stringify(event)).not.toThrow();
        } catch (e) {
          if (!(e instanceof InvalidEvent)) throw e;
          expect(e.reason.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
    expect(valid).toBeGreaterThan(0); // the generator reaches valid events too
  });

  it('refuses a lone surrogate or deep nesting at encode (the SDK and every publisher), naming the field', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0xd800, max: 0xdfff }), async (cp) => {
        const e = { ...base, row_id: `a${String.fromCharCode(cp)}b` };
        await expect(jsonCodec.encode(e as never)).rejects.toThrow(/row_id: holds a lone UTF-16 surrogate/);
      }),
      { numRuns: 50 },
    );
    const nested = { ...base, actions: [{ tool: 't', arguments: { a: deep(10_000) } }] };
    expect(() => validateEvent(nested)).toThrow(new RegExp(`nested deeper than ${MAX_NESTING} levels`));
    expect(() => validateEvent({ ...base, actions: [{ tool: 't', arguments: { a: deep(40) } }] })).not.toThrow();
  });
});
