/** Number formatting shared by the terminal and Markdown output. JSON keeps full precision. */
type Interval = readonly [number, number] | null | undefined;

export const pct = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined ? '—' : `${(100 * x).toFixed(digits)}%`;
export const num = (x: number | null | undefined, digits = 3): string =>
  x === null || x === undefined ? '—' : x.toFixed(digits);
export const signedPts = (x: number | null | undefined): string =>
  x === null || x === undefined ? '—' : `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)} pts`;
export const pctInterval = (i: Interval): string => (i ? `${pct(i[0])} – ${pct(i[1])}` : '—');
export const ptsInterval = (i: Interval): string => (i ? `${signedPts(i[0])} … ${signedPts(i[1])}` : '—');
/**
 * Dollars with their significant digits: cents from $1 up, else two significant digits ($0.00033, $0.062), so a
 * small cost never prints as $0.0000. Unknown is `—`.
 */
export const usd = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x)
    ? '—'
    : x === 0
      ? '$0'
      : x >= 1
        ? `$${x.toFixed(2)}`
        : `$${x
            .toPrecision(2)
            .replace(/(\.\d*?)0+$/, '$1')
            .replace(/\.$/, '')}`;
export const pValue = (p: number): string => (p < 0.001 ? '< 0.001' : p.toFixed(3));
/** A list of row ids, cut after `max` with a count of the rest. */
export const rowList = (ids: readonly string[], max = 20): string =>
  ids.length === 0
    ? '—'
    : ids.length <= max
      ? ids.join(', ')
      : `${ids.slice(0, max).join(', ')} … (+${ids.length - max} more)`;
/**
 * pass^1..K as one cell: every value up to `max`, else the first `max - 2`, an ellipsis and pass^K, with K (an
 * import of 860 attempts per row printed 860 numbers). JSON keeps them all.
 */
export const curve = (values: readonly string[], max = 6): string =>
  values.length === 0
    ? '—'
    : values.length <= max
      ? values.join(' / ')
      : `${values.slice(0, max - 2).join(' / ')} / … / ${values.at(-1)!} (k = ${values.length})`;
