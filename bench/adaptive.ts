import { readFileSync } from 'node:fs';
import { DEFAULT_ADAPTIVE, type AdaptiveOptions } from '../processors/core/adaptive.ts';
import { adaptiveGate, fixedGate, trueClass, type GateOutcome, type SimRow } from '../processors/core/adaptiveSim.ts';
import type { StabilityClass } from '../processors/core/classify.ts';
import { createRng } from '../processors/core/prng.ts';
import { DEFAULT_SEQUENTIAL_GATE } from '../processors/core/sequentialGate.ts';
import { contentKey, errorRate, BASELINE } from '../demo/agents.ts';
import { loadDemoDataset } from '../demo/dataset/demoRow.ts';
import { CHECKS, decide, parseRequest, policyChecks, type CheckAnswers } from '../demo/refundPolicy.ts';

/**
 * `npm run bench -- adaptive`: the adaptive design (budget 2.5 attempts a row, max-k 8) and the
 * sequential gate against fixed k = 3, 5 and 8, on the same rows and seeds (docs/adaptive.md). Rows'
 * pass probabilities come from τ-bench's shipped per-task results and from the demo's baseline agent.
 */
export type AdaptiveBenchLine = {
  rows: string;
  design: string;
  /** Candidate attempts per row (confirmations of both versions included). */
  attemptsPerRow: number;
  /** Attempts as a share of fixed k = 5's on the same rows. */
  vsK5: number;
  falseFail: number;
  falsePass: number;
  /** Share of the candidate's rows of each true class given another class (unclassified counts). */
  classError: Record<'stable_correct' | 'stable_wrong' | 'flip', number | null>;
};

/** τ-bench gpt-4o's per-task pass rates (airline and retail, 4 trials each); 5% of rows with p ≥ 0.75 must not break. */
export const tauRows = (file: string, seed: number): SimRow[] => {
  const by = new Map<string, boolean[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { domain: string; task_id: string; model: string; passed: boolean };
    if (r.model !== 'gpt-4o') continue;
    const id = `${r.domain}::${r.task_id}`;
    by.set(id, [...(by.get(id) ?? []), r.passed]);
  }
  const rows = [...by].map(([row_id, v]) => ({
    row_id,
    p: v.filter(Boolean).length / v.length,
    must_not_break: false,
  }));
  const eligible = rows.flatMap((r, i) => (r.p >= 0.75 ? [i] : []));
  const rng = createRng(seed);
  const mnb = new Set<number>();
  while (mnb.size < Math.round(rows.length * 0.05)) mnb.add(eligible[rng.int(eligible.length)]!);
  return rows.map((r, i) => ({ ...r, must_not_break: mnb.has(i) }));
};

/** The demo's rows: prompt-v1's exact chance of the right verdict on each (all 8 answer combinations), its tags. */
export const demoRows = (): SimRow[] =>
  loadDemoDataset().map((row) => {
    const { order } = parseRequest(row.input);
    const truth = policyChecks(order);
    const key = contentKey(row.input);
    let p = 0;
    for (let mask = 0; mask < 1 << CHECKS.length; mask++) {
      const answers = { ...truth } as CheckAnswers;
      let weight = 1;
      CHECKS.forEach((c, j) => {
        const e = errorRate(BASELINE, order, c, key);
        const wrong = (mask >> j) & 1;
        if (wrong) answers[c] = !truth[c];
        weight *= wrong ? e : 1 - e;
      });
      if (decide(answers) === decide(truth)) p += weight;
    }
    return { row_id: row.row_id, p, must_not_break: row.tags.includes('must_not_break') };
  });

/** The candidate with one planted regression: the first must-not-break row with p = 1 drops to `to`. */
export const plant = (rows: readonly SimRow[], to: number): SimRow[] => {
  const at = rows.findIndex((r) => r.must_not_break && r.p >= 1);
  if (at < 0) throw new Error('no must-not-break row with p = 1 to plant a regression on');
  return rows.map((r, i) => (i === at ? { ...r, p: to } : r));
};

type Design = { name: string; run: (b: readonly SimRow[], c: readonly SimRow[], seed: number) => GateOutcome };

export const benchAdaptive = (o: {
  tauFile: string;
  sims: number;
  regressionTo?: number;
  log?: (line: string) => void;
}): AdaptiveBenchLine[] => {
  const sources: [string, SimRow[]][] = [
    ['τ-bench', tauRows(o.tauFile, 31)],
    ['demo', demoRows()],
  ];
  const lines: AdaptiveBenchLine[] = [];
  for (const [name, rows] of sources) {
    const R = rows.length;
    const adaptive = (budget: number | null): AdaptiveOptions => ({ ...DEFAULT_ADAPTIVE, budget });
    const designs: Design[] = [
      ...[3, 5, 8].map((k) => ({
        name: `fixed k=${k}`,
        run: (b: readonly SimRow[], c: readonly SimRow[], seed: number) => fixedGate(b, c, k, 3, 3, createRng(seed)),
      })),
      {
        name: 'adapt 2.5/row',
        run: (b, c, seed) => adaptiveGate(b, c, adaptive(2.5 * R), DEFAULT_SEQUENTIAL_GATE, createRng(seed)),
      },
      {
        name: 'adapt, no cap',
        run: (b, c, seed) => adaptiveGate(b, c, adaptive(null), DEFAULT_SEQUENTIAL_GATE, createRng(seed)),
      },
    ];
    const planted = plant(rows, o.regressionTo ?? 0.8);
    const truths = rows.map((r) => trueClass(r.p));
    const results = designs.map((d) => {
      o.log?.(`adaptive: ${name}: ${d.name} …`);
      let attempts = 0;
      let falseFail = 0;
      let falsePass = 0;
      const wrong = { stable_correct: 0, stable_wrong: 0, flip: 0 };
      const total = { stable_correct: 0, stable_wrong: 0, flip: 0 };
      for (let s = 0; s < o.sims; s++) {
        const none = d.run(rows, rows, 2 * s + 1);
        const reg = d.run(rows, planted, 2 * s + 2);
        attempts += none.attempts + reg.attempts;
        if (none.verdict === 'fail') falseFail++;
        if (reg.verdict === 'pass') falsePass++;
        none.classes.forEach((c: StabilityClass, i) => {
          const t = truths[i]! as keyof typeof total;
          total[t]++;
          if (c !== t) wrong[t]++;
        });
      }
      const share = (k: keyof typeof total) => (total[k] === 0 ? null : wrong[k] / total[k]);
      return {
        rows: name,
        design: d.name,
        attemptsPerRow: attempts / (2 * o.sims * R),
        vsK5: 0,
        falseFail: falseFail / o.sims,
        falsePass: falsePass / o.sims,
        classError: {
          stable_correct: share('stable_correct'),
          stable_wrong: share('stable_wrong'),
          flip: share('flip'),
        },
      };
    });
    const k5 = results.find((r) => r.design === 'fixed k=5')!.attemptsPerRow;
    for (const r of results) lines.push({ ...r, vsK5: r.attemptsPerRow / k5 });
  }
  return lines;
};
