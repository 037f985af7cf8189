/**
 * Deep links into the dashboard: `passk serve` and `passk demo` print them so the page opens on the decision the
 * terminal just reported. `base` is the server's URL (with `?token=` when it has one); the route is the hash.
 */
export type GateRef = {
  suite: string;
  dataset_version: string;
  baseline: string;
  candidate: string;
  verdict: 'pass' | 'fail';
  reasons: readonly { passed: boolean; rows?: readonly string[] | undefined }[];
};

const route = (base: string, view: string, params: Record<string, string>): string =>
  `${base}#/${view}?${new URLSearchParams(params).toString()}`;

/** The comparison a gate decided, with its verdict banner; with `row`, that row's attempt diff opened. */
export const compareLink = (base: string, g: Omit<GateRef, 'verdict' | 'reasons'>, row?: string): string =>
  route(base, 'compare', {
    suite: g.suite,
    dataset_version: g.dataset_version,
    baseline: g.baseline,
    candidate: g.candidate,
    ...(row ? { row } : {}),
  });

/** The first row a failing rule names: the regression to look at first. */
export const firstFailingRow = (g: GateRef): string | undefined =>
  g.reasons.find((r) => !r.passed && (r.rows?.length ?? 0) > 0)?.rows?.[0];

/** The deep links for a gate: its comparison, and its first failing row when it failed on one. */
export const gateLinks = (base: string, g: GateRef): { gate: string; row?: { id: string; url: string } } => {
  const row = g.verdict === 'fail' ? firstFailingRow(g) : undefined;
  return { gate: compareLink(base, g), ...(row ? { row: { id: row, url: compareLink(base, g, row) } } : {}) };
};
