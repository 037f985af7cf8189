import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syntheticTrials } from '../../bench/processors.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { anyBytes, base, deep } from '../helpers/poison.ts';
import { fastJsonCodec } from '../../log/fastValidate.ts';

const outcome = async (decode: () => Promise<unknown>): Promise<{ ok: unknown } | { reason: string }> => {
  try {
    return { ok: await decode() };
  } catch (e) {
    if (!(e instanceof InvalidEvent)) throw e;
    return { reason: e.reason };
  }
};

/** The fast path validates once (compiled closed schemas); it must accept and refuse exactly what zod does. */
describe('fastJsonCodec', () => {
  it('decodes whatever bytes exactly as the zod codec: the same event, or the same reason', async () => {
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(anyBytes, async (bytes) => {
        const fast = await outcome(() => fastJsonCodec.decode(bytes));
        expect(fast).toEqual(await outcome(() => jsonCodec.decode(bytes)));
        if ('ok' in fast) valid++;
      }),
      { numRuns: 400 },
    );
    expect(valid).toBeGreaterThan(0);
  }, 30_000);

  it('agrees on valid trials, unknown fields (stripped by the slow path) and escapes', async () => {
    const cases = [
      ...[...syntheticTrials({ events: 50, rows: 5, versions: 2 })].map((t) => JSON.stringify(t)),
      JSON.stringify({ ...base, x_new_optional_field: 1 }),
      JSON.stringify({ ...base, row_id: 'caf\u00e9 \\u0041' }),
      JSON.stringify({ ...base, row_id: 'a\ud800b' }),
      JSON.stringify({ ...base, actions: [{ tool: 't', arguments: { a: deep(40) } }] }),
      JSON.stringify({ ...base, actions: [{ tool: 't', arguments: { a: deep(70) } }] }),
      JSON.stringify({ ...base, type: '__proto__' }),
    ];
    for (const text of cases) {
      const bytes = new TextEncoder().encode(text);
      expect(await outcome(() => fastJsonCodec.decode(bytes))).toEqual(await outcome(() => jsonCodec.decode(bytes)));
    }
  });
});
