import { adaptiveClass, planRound, type AdaptiveOptions, type AdaptiveRound, type AdaptiveRow } from './adaptive.ts';
import { classOf, type StabilityClass } from './classify.ts';
import type { Rng } from './prng.ts';
import { sequentialGate, settleGate, type GateRowInput, type SequentialGateOptions } from './sequentialGate.ts';

/**
 * Seeded simulation of the adaptive design against fixed k, on rows with known pass probabilities:
 * the unit tests' checks of bias, coverage and gate error rates, and `npm run bench -- adaptive`.
 * Every attempt is an independent Bernoulli(p) draw from `rng`.
 */
export type SimRow = { readonly row_id: string; readonly p: number; readonly must_not_break: boolean };

export type SimRun = {
  /** Each row's verdicts in attempt order. */
  verdicts: boolean[][];
  attempts: number;
  rounds: AdaptiveRound[];
};

const draw = (p: number, rng: Rng): boolean => rng.next() < p;

/**
 * One version run adaptively. `halt`, asked after every round with the verdicts so far, stops the run
 * early (the sequential gate's fail): a last round stops every open row with reason `gate_decided`.
 */
export const simulateAdaptive = (
  rows: readonly SimRow[],
  o: AdaptiveOptions,
  rng: Rng,
  halt?: (verdicts: readonly (readonly boolean[])[]) => boolean,
): SimRun => {
  const verdicts = rows.map(() => [] as boolean[]);
  const open = new Set(rows.map((_, i) => i));
  const index = new Map(rows.map((r, i) => [r.row_id, i]));
  const rounds: AdaptiveRound[] = [];
  let attempts = 0;
  let halted = false;
  for (let round = 0; open.size > 0; round++) {
    const state: AdaptiveRow[] = [...open].map((i) => ({
      row_id: rows[i]!.row_id,
      must_not_break: rows[i]!.must_not_break,
      attempts: verdicts[i]!.length,
      n: verdicts[i]!.length,
      c: verdicts[i]!.filter(Boolean).length,
    }));
    const plan = planRound(round, state, attempts, o, halted);
    rounds.push(plan);
    for (const d of plan.decisions) if (d.decision === 'stop') open.delete(index.get(d.row_id)!);
    if (plan.done) break;
    for (const g of plan.grants) {
      const i = index.get(g.row_id)!;
      for (let a = 0; a < g.attempts; a++) verdicts[i]!.push(draw(rows[i]!.p, rng));
      attempts += g.attempts;
    }
    halted = halt?.(verdicts) ?? false;
  }
  return { verdicts, attempts, rounds };
};

export const simulateFixed = (rows: readonly SimRow[], k: number, rng: Rng): SimRun => ({
  verdicts: rows.map((r) => Array.from({ length: k }, () => draw(r.p, rng))),
  attempts: rows.length * k,
  rounds: [],
});

const count = (v: readonly boolean[]) => ({ n: v.length, c: v.filter(Boolean).length });

export type GateOutcome = {
  verdict: 'pass' | 'fail';
  /** Candidate attempts, plus the confirmation attempts of both versions. */
  attempts: number;
  /** The candidate's class per row, as its design assigns it. */
  classes: StabilityClass[];
};

/**
 * The fixed design's gate, as `passk gate` and the live gate decide today: both versions run k times;
 * a must-not-break row stable-correct on the baseline and not on the candidate is a suspect; both
 * versions get `confirmAttempts` more on each suspect; broken = the baseline passed every attempt and
 * the candidate did not. The gate fails on any broken row.
 */
export const fixedGate = (
  baseline: readonly SimRow[],
  candidate: readonly SimRow[],
  k: number,
  confirmAttempts: number,
  minAttempts: number,
  rng: Rng,
): GateOutcome => {
  const b = simulateFixed(baseline, k, rng).verdicts;
  const c = simulateFixed(candidate, k, rng).verdicts;
  let attempts = candidate.length * k;
  let broken = false;
  baseline.forEach((row, i) => {
    if (!row.must_not_break) return;
    const sb = count(b[i]!);
    const sc = count(c[i]!);
    if (!(sb.c === sb.n && sc.c < sc.n)) return;
    const more = Array.from({ length: confirmAttempts }, () => draw(row.p, rng));
    for (let a = 0; a < confirmAttempts; a++) draw(candidate[i]!.p, rng);
    attempts += 2 * confirmAttempts;
    if (more.every(Boolean)) broken = true;
  });
  return {
    verdict: broken ? 'fail' : 'pass',
    attempts,
    classes: c.map((v) => classOf(v.length, count(v).c, minAttempts)),
  };
};

/**
 * The adaptive design's gate: the baseline ran adaptively; the candidate runs adaptively and the
 * sequential gate is asked after every round, stopping the candidate as soon as it fails. A suspect
 * row gets the baseline confirmation attempts the gate asks for (counted in `attempts`). When the
 * candidate's run ends with the gate still open, the fixed rules settle it (`settleGate`).
 */
export const adaptiveGate = (
  baseline: readonly SimRow[],
  candidate: readonly SimRow[],
  o: AdaptiveOptions,
  g: SequentialGateOptions,
  rng: Rng,
): GateOutcome & { decided_early: boolean } => {
  const b = simulateAdaptive(baseline, o, rng).verdicts;
  const mnb = baseline.flatMap((r, i) => (r.must_not_break ? [i] : []));
  const confirmation = new Map<number, boolean[]>();
  let confirmAttempts = 0;
  const gateRows = (c: readonly (readonly boolean[])[]): GateRowInput[] =>
    mnb.map((i) => {
      const conf = confirmation.get(i) ?? [];
      return {
        row_id: baseline[i]!.row_id,
        baseline: count([...b[i]!, ...conf]),
        baseline_confirmation: count(conf),
        candidate: count(c[i]!),
      };
    });
  // the baseline's confirmation attempts for the suspects, then the verdict so far
  const judge = (c: readonly (readonly boolean[])[]) => {
    for (;;) {
      const v = sequentialGate(gateRows(c), g);
      const asks = v.rows.filter((r) => r.status === 'suspect' && r.needs.baseline > 0);
      if (asks.length === 0) return v;
      for (const r of asks) {
        const i = mnb.find((j) => baseline[j]!.row_id === r.row_id)!;
        const conf = confirmation.get(i) ?? [];
        for (let a = 0; a < r.needs.baseline; a++) conf.push(draw(baseline[i]!.p, rng));
        confirmation.set(i, conf);
        confirmAttempts += r.needs.baseline;
      }
    }
  };
  let early = false;
  const run = simulateAdaptive(candidate, o, rng, (c) => {
    early = judge(c).verdict === 'fail';
    return early;
  });
  const v = judge(run.verdicts);
  const verdict = v.verdict === 'open' ? settleGate(gateRows(run.verdicts), g) : v.verdict;
  return {
    verdict,
    attempts: run.attempts + confirmAttempts,
    decided_early: early,
    classes: run.verdicts.map((x) => adaptiveClass(x.length, count(x).c, o.minAttempts)),
  };
};

/** A row's true class: stable-correct at p = 1, stable-wrong at p = 0, else a flip. */
export const trueClass = (p: number): StabilityClass => (p >= 1 ? 'stable_correct' : p <= 0 ? 'stable_wrong' : 'flip');
