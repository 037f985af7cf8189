import type { Group } from './groups.ts';
import type { PairInput } from './pairing.ts';

/**
 * Lines up two agent versions by (suite, dataset version): comparisons are only made within one
 * dataset version. `both` has the suites where both versions have trials; `oneSided` those where
 * only one has (the gate still checks them: a must-not-break row there cannot be classified).
 */
export type VersionPairs = { both: PairInput[]; oneSided: PairInput[]; versions: string[] };

export const versionPairs = (groups: readonly Group[], baseline: string, candidate: string): VersionPairs => {
  const scopes = new Map<string, PairInput>();
  for (const g of groups) {
    if (g.key.agent_version !== baseline && g.key.agent_version !== candidate) continue;
    const id = JSON.stringify([g.key.suite, g.key.dataset_version]);
    const pair = scopes.get(id) ?? {
      suite: g.key.suite,
      dataset_version: g.key.dataset_version,
      baseline: { version: baseline, rows: new Map() },
      candidate: { version: candidate, rows: new Map() },
    };
    if (g.key.agent_version === baseline) pair.baseline = { version: baseline, rows: g.rows };
    if (g.key.agent_version === candidate) pair.candidate = { version: candidate, rows: g.rows };
    scopes.set(id, pair);
  }
  const all = [...scopes.values()];
  const has = (p: PairInput) => p.baseline.rows.size > 0 && p.candidate.rows.size > 0;
  return {
    both: all.filter(has),
    oneSided: all.filter((p) => !has(p)),
    versions: [...new Set(groups.map((g) => g.key.agent_version))].sort(),
  };
};
