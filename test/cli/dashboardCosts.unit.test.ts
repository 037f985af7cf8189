import { describe, expect, it } from 'vitest';
import { usd as cliUsd } from '../../cli/format/numbers.ts';
// @ts-expect-error the dashboard's client is plain JavaScript without declarations
import { usd } from '../../web/client/dom.js';

describe("the dashboard's costs", () => {
  it('print with their significant digits or —, exactly as the CLI prints them', () => {
    const costs = [0, 0.00033, 0.000333333, 0.0012, 0.0625, 0.1, 0.999, 1, 1.234, 12.5, null, undefined, NaN];
    expect(costs.map((x) => usd(x))).toEqual(costs.map((x) => cliUsd(x)));
    expect([0, 0.00033, 0.0625, 1.234, null].map((x) => usd(x))).toEqual(['$0', '$0.00033', '$0.063', '$1.23', '—']);
  });
});
