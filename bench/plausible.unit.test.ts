import { describe, expect, it } from 'vitest';
import { implausible, memoryBandwidth } from './plausible.ts';

describe('the bench’s baseline guard', () => {
  const GBs = 10e9;
  it('accepts a baseline faster than passk and within memory bandwidth', () => {
    expect(
      implausible(
        [{ name: 'fold', baselinePerSec: 700_000, candidatePerSec: 90_000, bytesPerItem: 400, subset: true }],
        GBs,
      ),
    ).toEqual([]);
  });
  it('refuses a baseline that reads faster than memory can be copied (the 92M msg/s consume)', () => {
    const [why] = implausible(
      [{ name: 'kafka', baselinePerSec: 92e6, candidatePerSec: 9_800, bytesPerItem: 400 }],
      GBs,
    );
    expect(why).toMatch(/kafka: baseline reads 36\.8 GB\/s, above this machine's memory bandwidth \(10\.0 GB\/s\)/);
  });
  it('refuses a baseline doing a subset of passk’s work yet slower (not tight), unless it is not a subset', () => {
    const slow = { name: 'fold', baselinePerSec: 50_000, candidatePerSec: 88_000 };
    expect(implausible([{ ...slow, subset: true }], GBs)[0]).toMatch(/not a tight baseline/);
    expect(implausible([slow], GBs)).toEqual([]);
  });
  it('refuses a rate that is not a measurement', () => {
    expect(implausible([{ name: 'x', baselinePerSec: Infinity, candidatePerSec: 1 }], GBs)[0]).toMatch(
      /not a measurement/,
    );
  });
  it('measures a finite, positive bandwidth', () => {
    const b = memoryBandwidth(16, 2);
    expect(b).toBeGreaterThan(1e8);
    expect(Number.isFinite(b)).toBe(true);
  });
});
