import { STABILITY_CLASSES, type Comparison, type SuspectedRegression } from '../../processors/core/index.ts';
import { heading, list, table, text, type Block, type Cell } from './doc.ts';
import { pct, ptsInterval, pValue, rowList, signedPts } from './numbers.ts';

const LABEL: Record<string, string> = {
  stable_correct: 'stable-correct',
  stable_wrong: 'stable-wrong',
  flip: 'flip',
  unclassified: 'unclassified',
};
const OUTCOME: Record<string, Cell> = {
  confirmed_regression: { text: 'confirmed regression', tone: 'bad' },
  baseline_also_varies: { text: 'baseline also varies', tone: 'dim' },
  cleared: { text: 'cleared', tone: 'good' },
  unresolved: { text: 'unresolved', tone: 'warn' },
};

const headline = (c: Comparison): Block => {
  const p = c.paired;
  const k = p.k_max;
  const hat = p.pass_hat_k[String(k)];
  return table(
    [
      'metric',
      c.baseline_version,
      c.candidate_version,
      `paired Δ (${p.rows} rows)`,
      `${pct(c.baseline.intervals.confidence, 0)} interval`,
    ],
    [
      [
        'mean accuracy',
        pct(p.mean_accuracy.baseline),
        pct(p.mean_accuracy.candidate),
        signedPts(p.mean_accuracy.delta),
        ptsInterval(p.mean_accuracy.interval),
      ],
      [
        'pass@1',
        pct(p.pass_at_1.baseline),
        pct(p.pass_at_1.candidate),
        signedPts(p.pass_at_1.delta),
        ptsInterval(p.pass_at_1.interval),
      ],
      ...(k >= 2 && hat
        ? [[`pass^${k}`, pct(hat.baseline), pct(hat.candidate), signedPts(hat.delta), ptsInterval(hat.interval)]]
        : []),
      [
        'flip rate',
        pct(p.flip_rate.baseline),
        pct(p.flip_rate.candidate),
        signedPts(p.flip_rate.delta),
        ptsInterval(p.flip_rate.interval),
      ],
      [
        'stable-correct rows',
        String(c.baseline.classes.stable_correct),
        String(c.candidate.classes.stable_correct),
        '',
        '',
      ],
    ],
  );
};

const transitions = (c: Comparison): Block =>
  table(
    ['baseline ↓ / candidate →', ...STABILITY_CLASSES.map((k) => LABEL[k]!)],
    STABILITY_CLASSES.map((b) => [LABEL[b]!, ...STABILITY_CLASSES.map((k) => String(c.transitions[b][k]))]),
  );

/** A first divergent check as every surface names it (the demo, `compare`, the dashboard): `proof_of_purchase (check 2)`. */
export const divergentCheck = (d: { check: string; position: number }): string => `${d.check} (check ${d.position})`;

const divergence = (s: SuspectedRegression): string => {
  const d = s.first_divergence;
  if (!d) return s.outcome === 'confirmed_regression' ? 'no check differs' : '';
  const show = (xs: typeof d.baseline) =>
    xs.map((a) => `${JSON.stringify(a.answer)}×${a.count}`).join(' ') || 'not answered';
  return `${divergentCheck(d)}: ${show(d.baseline)} → ${show(d.candidate)}`;
};

/** Suspected regressions a terminal or Markdown document lists before it summarizes the rest (`--all`: every one). */
export const SHOWN_SUSPECTS = 25;
const FIRST: readonly string[] = ['confirmed_regression', 'unresolved', 'baseline_also_varies', 'cleared'];

const suspects = (c: Comparison, all: boolean): Block[] => {
  const every = c.confirmation.rows;
  // a long list shows its confirmed regressions first, then the rest in row order, and counts what it leaves out
  const rows =
    all || every.length <= SHOWN_SUSPECTS
      ? every
      : [...every].sort((a, b) => FIRST.indexOf(a.outcome) - FIRST.indexOf(b.outcome)).slice(0, SHOWN_SUSPECTS);
  const rest = every.length - rows.length;
  const left = Object.entries(c.confirmation.counts)
    .map(([o, n]) => [o, n - rows.filter((s) => s.outcome === o).length] as const)
    .filter(([, n]) => n > 0)
    .map(([o, n]) => `${n} ${(OUTCOME[o] as { text: string }).text}`)
    .join(', ');
  if (every.length === 0)
    return [
      text(
        'No suspected regressions: every row stable-correct on the baseline is stable-correct on the candidate.',
        'good',
      ),
    ];
  return [
    table(
      [
        'suspected regression',
        'screening (base → cand)',
        'confirmation attempts (base / cand)',
        'all attempts (base → cand)',
        'outcome',
        'first divergent check',
      ],
      rows.map((s) => [
        s.row_id,
        `${LABEL[s.screening.baseline]} → ${LABEL[s.screening.candidate]}`,
        s.baseline.confirmation_attempts + s.candidate.confirmation_attempts === 0
          ? 'not run yet'
          : `${s.baseline.confirmation_passes}/${s.baseline.confirmation_attempts} · ${s.candidate.confirmation_passes}/${s.candidate.confirmation_attempts} passed`,
        `${s.baseline.c}/${s.baseline.n} → ${s.candidate.c}/${s.candidate.n}`,
        OUTCOME[s.outcome]!,
        divergence(s),
      ]),
    ),
    ...(rest > 0
      ? [
          text(
            `… and ${rest} more suspected regressions (${left}): --all prints every one, --json lists them all.`,
            'dim',
          ),
        ]
      : []),
  ];
};

/**
 * When the paired pass^K is over fewer rows than the pairs (a row with fewer than K graded attempts on a side), the
 * line that says over how many, and where K comes from: the smaller of the two versions' report K.
 */
const pairedKLine = (c: Comparison): Block[] => {
  const k = c.paired.k_max;
  const hat = c.paired.pass_hat_k[String(k)];
  if (k < 2 || !hat || hat.rows === c.paired.rows) return [];
  return [
    text(
      `pass^${k}: over the ${hat.rows} rows with ${k} graded attempts on both versions (K ${k}: the smaller of the ` +
        `versions' K, ${c.baseline.k_max} / ${c.candidate.k_max}, as passk report gives each)`,
      'dim',
    ),
  ];
};

/**
 * What screening used on each side: the planned attempts per row, or on a version with an adaptive run, that run's
 * attempts (as many as its stopping rule gave each row), its headline numbers from the first stage's k. `stageFrom`
 * says where that k came from, when the reader cannot know it (the run's rounds are on the log, not in trial files).
 */
const screeningText = (c: Comparison, stageFrom?: string): string => {
  const { baseline: b, candidate: k } = c.first_stage;
  if (b === null && k === null)
    return `screening uses ${c.screen_attempts.baseline} / ${c.screen_attempts.candidate} attempts per row (baseline / candidate)`;
  const stage = b ?? k;
  const sides = b !== null && k !== null ? 'both versions' : b !== null ? 'the baseline' : 'the candidate';
  const fixed =
    b === null
      ? `; the baseline's screening uses ${c.screen_attempts.baseline} attempts per row`
      : k === null
        ? `; the candidate's screening uses ${c.screen_attempts.candidate} attempts per row`
        : '';
  return (
    `${sides === 'both versions' ? 'both versions are' : `${sides} is`} adaptive: screening classes a row from all ` +
    `its adaptive attempts (as many as the stopping rule gave it), the headline numbers and paired Δ come from each ` +
    `row's first ${stage} graded attempts (the first stage${stageFrom ? `, ${stageFrom}` : ''})${fixed}`
  );
};

export const compareBlocks = (c: Comparison, opts: { all?: boolean; stageFrom?: string } = {}): Block[] => [
  heading(`${c.suite} · dataset ${c.dataset_version}: ${c.baseline_version} → ${c.candidate_version}`),
  text(
    `${c.rows.paired} rows on both versions; ${screeningText(c, opts.stageFrom)}` +
      (c.rows.baseline_only.length || c.rows.candidate_only.length
        ? `; only on baseline: ${rowList(c.rows.baseline_only, 10)}; only on candidate: ${rowList(c.rows.candidate_only, 10)}`
        : ''),
    'dim',
  ),
  headline(c),
  ...pairedKLine(c),
  ...(c.paired.flip_rate.rows !== c.paired.rows
    ? [text(`flip rate: over the ${c.paired.flip_rate.rows} rows classified on both versions`, 'dim')]
    : []),
  heading('Class transitions', 2),
  transitions(c),
  list(
    `Became stable-correct (${c.became_stable_correct.length}):`,
    c.became_stable_correct.length ? [rowList(c.became_stable_correct, 40)] : [],
    'good',
  ),
  list(
    `Stable-correct on the baseline, not on the candidate (${c.lost_stable_correct.length}):`,
    c.lost_stable_correct.length ? [rowList(c.lost_stable_correct, 40)] : [],
    c.lost_stable_correct.length ? 'bad' : undefined,
  ),
  text(
    `Exact McNemar on stable-correct: ${c.mcnemar.lost} lost, ${c.mcnemar.gained} gained over ${c.mcnemar.rows} rows classified on both; p = ${pValue(c.mcnemar.p_value)}.`,
  ),
  heading('Confirmation', 2),
  ...suspects(c, opts.all ?? false),
  text(''),
];
