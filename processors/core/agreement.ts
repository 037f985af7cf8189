/**
 * Agreement between judge labels and human labels on the same items: raw agreement, Cohen's κ
 * (agreement beyond what the two label distributions give by chance) and a confusion matrix with
 * per-class precision (of the judge's calls) and recall (of the human labels).
 */
export type Confusion = {
  labels: string[];
  matrix: Record<string, Record<string, number>>;
  /** The ids of the items in each cell (human label → judge label), when the pairs carry them. */
  items?: Record<string, Record<string, string[]>>;
};
export type ClassScores = Record<string, { precision: number | null; recall: number | null; support: number }>;
export type Agreement = {
  items: number;
  agreed: number;
  agreement: number | null;
  kappa: number | null;
  confusion: Confusion;
  per_class: ClassScores;
};

export const agreementStats = (pairs: readonly { human: string; judge: string; item?: string }[]): Agreement => {
  const labels = [...new Set(pairs.flatMap((p) => [p.human, p.judge]))].sort();
  const matrix = Object.fromEntries(labels.map((h) => [h, Object.fromEntries(labels.map((j) => [j, 0]))])) as Record<
    string,
    Record<string, number>
  >;
  for (const { human, judge } of pairs) matrix[human]![judge]!++;
  const withIds = pairs.length > 0 && pairs.every((p) => p.item !== undefined);
  const items: Record<string, Record<string, string[]>> = {};
  if (withIds) for (const { human, judge, item } of pairs) ((items[human] ??= {})[judge] ??= []).push(item!);
  const N = pairs.length;
  const rowSum = (h: string) => labels.reduce((a, j) => a + matrix[h]![j]!, 0);
  const colSum = (j: string) => labels.reduce((a, h) => a + matrix[h]![j]!, 0);
  const agree = labels.reduce((a, l) => a + matrix[l]![l]!, 0);
  const po = N > 0 ? agree / N : null;
  const pe = N > 0 ? labels.reduce((a, l) => a + (rowSum(l) / N) * (colSum(l) / N), 0) : null;
  // κ is undefined when chance agreement is already perfect (both raters use one and the same label).
  const kappa = po === null || pe === null || pe === 1 ? null : (po - pe) / (1 - pe);
  const per_class: ClassScores = Object.fromEntries(
    labels.map((l) => [
      l,
      {
        precision: colSum(l) > 0 ? matrix[l]![l]! / colSum(l) : null,
        recall: rowSum(l) > 0 ? matrix[l]![l]! / rowSum(l) : null,
        support: rowSum(l),
      },
    ]),
  );
  return {
    items: N,
    agreed: agree,
    agreement: po,
    kappa,
    confusion: { labels, matrix, ...(withIds ? { items } : {}) },
    per_class,
  };
};
