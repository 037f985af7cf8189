import type { GroupReport, JudgeCalibration, ReportedGroup } from '../../processors/core/index.ts';
import { heading, list, table, text, type Block } from './doc.ts';
import { num, pct, pctInterval } from './numbers.ts';

const title = (g: GroupReport): string => `${g.suite} · dataset ${g.dataset_version} · agent ${g.agent_version}`;

const evidence = (g: GroupReport): string => {
  const a = g.attempts_per_row;
  const per =
    a.min === null
      ? 'no graded attempts'
      : a.min === a.max
        ? `${a.min} graded attempts per row`
        : `${a.min}–${a.max} graded attempts per row (mean ${a.mean!.toFixed(1)})`;
  const left = g.rows_without_graded > 0 ? `; ${g.rows_without_graded} rows with no graded attempt left out` : '';
  const ungraded = g.ungraded_as_failure
    ? `${g.ungraded} ungraded counted as failures`
    : `${g.ungraded} ungraded left out`;
  return `${g.rows} rows, ${per}; ${g.trials} trials; ${ungraded}${left}`;
};

/** The one line that says an adaptive group's headline numbers are its first stage. */
const firstStageLine = (g: GroupReport & Pick<ReportedGroup, 'first_stage'>): Block[] => {
  const f = g.first_stage;
  if (!f) return [];
  const runs = f.runs.length === 1 ? `adaptive run ${f.runs[0]}` : `${f.runs.length} adaptive runs`;
  // with the version's other runs, a row's headline attempts are more than the first stage's k (pass^5 of 3 + 2)
  const others = f.other_attempts
    ? `, with the ${f.other_attempts} attempts of this version's other runs (not stopped adaptively, so all counted)`
    : '';
  return [
    text(
      `${runs}: pass@k, pass^k, flip rate and mean accuracy from each row's first ${f.k} graded attempts ` +
        `(the unbiased first stage, docs/adaptive.md)${others}; rows, trials and classes from all attempts, a row ` +
        `with a pass and a fail a flip as the run classed it ` +
        `(--first-stage K for another k, --all-attempts to pool)`,
    ),
  ];
};

const headline = (g: GroupReport & Pick<ReportedGroup, 'first_stage'>): Block => {
  const conf = pct(g.intervals.confidence, 0);
  const k = g.k_max;
  const ma = g.intervals.mean_accuracy;
  return table(
    ['metric', 'value', `${conf} interval`, 'how'],
    [
      [
        'mean accuracy',
        pct(g.mean_accuracy),
        pctInterval(ma.clustered),
        ma.clustered_se === null ? '—' : `clustered by row, SE ${(100 * ma.clustered_se).toFixed(1)} pts`,
      ],
      ['pass@1', pct(g.pass_at_1), pctInterval(g.intervals.pass_at_k['1']), 'bootstrap over rows'],
      ...(k >= 2
        ? [
            [
              `pass^${k}`,
              pct(g.pass_hat_k[String(k)]),
              pctInterval(g.intervals.pass_hat_k[String(k)]),
              `bootstrap over rows (${g.rows_at_k[String(k)]} rows)`,
            ],
          ]
        : []),
      [
        'flip rate',
        pct(g.flip_rate),
        pctInterval(g.intervals.flip_rate.bootstrap),
        g.first_stage
          ? `${g.first_stage.other_attempts ? 'attempts above' : `first ${g.first_stage.k} attempts`} disagree: ${g.first_stage.flips} of ${g.first_stage.rows} rows`
          : `${g.classes.flip} of ${g.classified} classified rows`,
      ],
    ],
  );
};

const curves = (g: GroupReport): Block =>
  table(
    ['k', 'pass@k', 'interval', 'pass^k', 'interval', 'rows'],
    Object.keys(g.pass_at_k).map((k) => [
      k,
      pct(g.pass_at_k[k]),
      pctInterval(g.intervals.pass_at_k[k]),
      pct(g.pass_hat_k[k]),
      pctInterval(g.intervals.pass_hat_k[k]),
      String(g.rows_at_k[k]),
    ]),
  );

/**
 * When the rows differ between k (a row is counted at k when it has k graded attempts: an unscored epoch, a
 * crashed trial, a shorter run), the line that says how many each k used.
 */
const rowsAtKLine = (g: GroupReport): Block[] => {
  const used = Object.entries(g.rows_at_k);
  if (used.every(([, n]) => n === g.rows)) return [];
  const differ = used.filter(([, n]) => n !== g.rows).map(([k, n]) => `k=${k}: ${n}`);
  return [
    text(
      `Rows counted at each k differ: ${differ.join(', ')} of ${g.rows} rows (a row counts at k when it has k ` +
        'graded attempts; K is the attempts every row was given, graded or not, or what the source declared).',
      'dim',
    ),
  ];
};

/** When the source declared the attempts per row and some rows have fewer recorded: how many, and what K is. */
const shortRowsLine = (g: GroupReport): Block[] => {
  if (g.declared_k === null || g.rows_short === 0) return [];
  const rows = g.rows + g.rows_without_graded;
  return [
    text(
      `${g.rows_short} of ${rows} rows ${g.rows_short === 1 ? 'has' : 'have'} fewer attempts recorded than the ` +
        `${g.declared_k} per row the source declared (missing from it); K is what was declared, not the fewest found.`,
      'dim',
    ),
  ];
};

const classes = (g: GroupReport): Block => {
  const share = (n: number) => (g.classified > 0 ? pct(n / g.classified) : '—');
  const ci = g.intervals.classes;
  return table(
    ['class', 'rows', 'share of classified', 'interval (Wilson)'],
    [
      [
        { text: 'stable-correct', tone: 'good' },
        String(g.classes.stable_correct),
        share(g.classes.stable_correct),
        pctInterval(ci.stable_correct),
      ],
      [
        { text: 'stable-wrong', tone: 'bad' },
        String(g.classes.stable_wrong),
        share(g.classes.stable_wrong),
        pctInterval(ci.stable_wrong),
      ],
      [{ text: 'flip', tone: 'warn' }, String(g.classes.flip), share(g.classes.flip), pctInterval(ci.flip)],
      [{ text: `unclassified (< ${g.min_attempts} graded)`, tone: 'dim' }, String(g.classes.unclassified), '', ''],
    ],
  );
};

const checks = (g: GroupReport): Block[] => {
  if (g.checks.length === 0) return [];
  return [
    table(
      ['intermediate check', 'rows', 'rows where it flips', 'flip rate', 'interval (Wilson)'],
      g.checks.map((c) => [c.name, String(c.rows), String(c.flipping_rows), pct(c.flip_rate), pctInterval(c.interval)]),
    ),
    list(
      'Stable verdict, flipping check underneath:',
      g.stable_verdict_check_flips.map(
        (r) => `row ${r.row_id} (${r.class.replaceAll('_', '-')}): ${r.checks.join(', ')}`,
      ),
      'warn',
    ),
  ];
};

const extras = (g: GroupReport): Block[] => {
  const o = g.output_flip;
  const lines = [
    o.eligible > 0
      ? `Output flips: ${o.rows} of ${o.eligible} rows with two or more outputs (${pct(o.rate)})${o.stable_wrong > 0 ? `, ${o.stable_wrong} of them stable-wrong with differing wrong answers` : ''}.`
      : '',
    g.forbidden_trials > 0 ? `Forbidden actions: ${g.forbidden_trials} trials.` : '',
  ].filter(Boolean);
  return lines.map((l) => text(l));
};

export const reportBlocks = (groups: readonly (GroupReport & Pick<ReportedGroup, 'first_stage'>)[]): Block[] =>
  groups.flatMap((g) => [
    heading(title(g)),
    text(evidence(g), 'dim'),
    ...firstStageLine(g),
    headline(g),
    curves(g),
    ...rowsAtKLine(g),
    ...shortRowsLine(g),
    classes(g),
    ...checks(g),
    ...extras(g),
    text(''),
  ]);

export const judgeBlocks = (judges: readonly JudgeCalibration[]): Block[] =>
  judges.flatMap((j) => {
    const a = j.agreement;
    const name = `${j.judge.id}${j.judge.version ? `@${j.judge.version}` : ''} · rubric ${j.judge.rubric_version}`;
    const perClass = a.confusion.labels.map((l) => [
      l,
      String(a.per_class[l]!.support),
      pct(a.per_class[l]!.precision),
      pct(a.per_class[l]!.recall),
      ...a.confusion.labels.map((j2) => String(a.confusion.matrix[l]![j2])),
    ]);
    return [
      heading(`judge ${name}`),
      table(
        ['measure', 'value', 'evidence'],
        [
          ['agreement with humans', pct(a.agreement), `${a.agreed} of ${a.items} items; ${pctInterval(a.interval)}`],
          ["Cohen's κ", num(a.kappa), ''],
          ['Spearman ρ (scores)', num(j.scores.spearman), `${j.scores.items} items`],
          ['MAE (scores)', num(j.scores.mae), ''],
          [
            'position-swap inconsistency',
            pct(j.position_swap.rate),
            `${j.position_swap.flagged} of ${j.position_swap.items} pairs`,
          ],
          [
            'self-consistency flip rate',
            pct(j.self_consistency.rate),
            `${j.self_consistency.flagged} of ${j.self_consistency.items} repeated items`,
          ],
          [
            'verbosity bias (score vs length, within label)',
            num(j.verbosity_bias.correlation),
            `${j.verbosity_bias.items} items`,
          ],
        ],
      ),
      ...(perClass.length
        ? [
            table(
              ['human label', 'items', 'precision', 'recall', ...a.confusion.labels.map((l) => `judge: ${l}`)],
              perClass,
            ),
          ]
        : []),
    ];
  });
