// @ts-check
/* global Blob */
import { api } from '../api.js';
import { ruleName } from './gates.js';
import { rowsLink } from './rows.js';
import { screeningLine } from '../screening.js';
import { card, ci, className, command, empty, h, pct, signedPct, table } from '../dom.js';
/**
 * @import { Answer } from '../../contract.ts'
 * @import { Child, Params, Scope, ViewContext } from '../view.d.ts'
 * @typedef {NonNullable<Answer<'/api/compare'>>} Comparison
 * @typedef {Comparison['confirmation']['rows'][number]} Suspect
 * @typedef {NonNullable<Suspect['first_divergence']>} Divergence
 * @typedef {Comparison['paired']['mean_accuracy']} PairedDelta
 * @typedef {Answer<'/api/gates'>[number]} Gate
 * @typedef {NonNullable<Answer<'/api/row'>>} Row
 */

export const title = 'Compare';
/** The two versions, and the row open in the drill-down. */
export const params = ['baseline', 'candidate', 'row'];
/**
 * What render asks for the scope the URL names, asked beside the list of suites and versions (app.js): the gates of
 * the suite, and the comparison when the URL names two versions (a version the scope lacks makes render ask
 * another, and this one is left).
 * @param {Params} params with suite and dataset_version
 */
export const prefetch = (params) => {
  api.ahead('/api/gates', { suite: params.suite ?? '' });
  if (params.baseline && params.candidate && params.baseline !== params.candidate)
    api.ahead('/api/compare', {
      suite: params.suite ?? '',
      dataset_version: params.dataset_version ?? '',
      baseline: params.baseline,
      candidate: params.candidate,
    });
};

const CLASSES = /** @type {const} */ (['stable_correct', 'stable_wrong', 'flip', 'unclassified']);
const OUTCOME = {
  confirmed_regression: 'confirmed regression',
  baseline_also_varies: 'baseline also varies',
  cleared: 'cleared on confirmation',
  unresolved: 'unresolved',
};

/**
 * The two versions: the URL's, each only if it has trials in this scope (an unknown one is named in a warning),
 * else the latest gate's on this scope, else the first two versions; never a version paired with itself by default.
 */
/**
 * @param {Scope} scope with two versions or more (render says so otherwise), so `other` always finds one
 * @param {Params} params
 * @param {ViewContext['warn']} warn
 * @returns {Promise<[string, string]>}
 */
const pickVersions = async (scope, params, warn) => {
  /** @param {string | undefined} v */
  const known = (v) => v !== undefined && scope.versions.includes(v);
  for (const key of ['baseline', 'candidate'])
    if (params[key] && !known(params[key]))
      warn(
        `No trials of version "${params[key]}" (${key}=) in ${scope.suite} · dataset ${scope.dataset_version}; its versions: ${scope.versions.join(', ')}.`,
      );
  const b = known(params.baseline) ? params.baseline : undefined;
  const c = known(params.candidate) ? params.candidate : undefined;
  if (b && c) return [b, c];
  const gates = await api.gates({ suite: scope.suite });
  const last = gates.find(
    (g) => g.dataset_version === scope.dataset_version && known(g.baseline) && known(g.candidate),
  );
  const [db, dc] = last ? [last.baseline, last.candidate] : [scope.versions[0], scope.versions[1]];
  /** @param {string | undefined} v */
  const other = (v) => /** @type {string} */ (scope.versions.find((x) => x !== v));
  const baseline = b ?? (db !== c ? db : other(c));
  const candidate = c ?? (dc !== baseline ? dc : other(baseline));
  return [baseline, candidate];
};

/** @param {Comparison} cmp */
const headline = (cmp) => {
  const b = cmp.baseline;
  const c = cmp.candidate;
  const k = Math.min(b.k_max, c.k_max);
  const p = cmp.paired;
  /**
   * @param {string} label
   * @param {string} key
   * @param {number | null | undefined} bv
   * @param {number | null | undefined} cv
   * @param {readonly [number, number] | null | undefined} biv
   * @param {readonly [number, number] | null | undefined} civ
   * @param {Child} delta
   */
  const row = (label, key, bv, cv, biv, civ, delta) =>
    h(
      'tr',
      { 'data-metric': key },
      h('th', {}, label),
      h('td', {}, pct(bv), h('small', {}, ` ${ci(biv)}`)),
      h('td', {}, pct(cv), h('small', {}, ` ${ci(civ)}`)),
      h('td', {}, delta),
    );
  // every number's paired change (candidate − baseline over the rows both versions ran), with its interval
  /** @param {PairedDelta | undefined} d (none for a k past the pair's) */
  const paired = (d) =>
    d && d.delta !== null
      ? h(
          'span',
          { 'data-testid': 'paired-delta', title: `over ${d.rows} rows on both versions` },
          signedPct(d.delta),
          h('small', {}, ` ${ci(d.interval, signedPct)}`),
        )
      : '—';
  return table(
    ['', cmp.baseline_version + ' (baseline)', cmp.candidate_version + ' (candidate)', 'paired change'],
    [
      row(
        'mean accuracy',
        'mean_accuracy',
        b.mean_accuracy,
        c.mean_accuracy,
        b.intervals.mean_accuracy.clustered,
        c.intervals.mean_accuracy.clustered,
        paired(p.mean_accuracy),
      ),
      row(
        'pass@1',
        'pass_at_1',
        b.pass_at_1,
        c.pass_at_1,
        b.intervals.pass_at_k['1'],
        c.intervals.pass_at_k['1'],
        paired(p.pass_at_1),
      ),
      row(
        `pass^${k}`,
        `pass_hat_${k}`,
        b.pass_hat_k[String(k)],
        c.pass_hat_k[String(k)],
        b.intervals.pass_hat_k[String(k)],
        c.intervals.pass_hat_k[String(k)],
        paired(p.pass_hat_k[String(k)]),
      ),
      row(
        'flip rate',
        'flip_rate',
        b.flip_rate,
        c.flip_rate,
        b.intervals.flip_rate.bootstrap,
        c.intervals.flip_rate.bootstrap,
        paired(p.flip_rate),
      ),
    ],
    { class: 'headline', 'data-testid': 'headline' },
  );
};

/** @param {Comparison} cmp @param {Pick<Scope, 'suite' | 'dataset_version'>} scope */
const matrix = (cmp, scope) => {
  const max = Math.max(1, ...CLASSES.flatMap((b) => CLASSES.map((c) => (b === c ? 0 : cmp.transitions[b][c]))));
  /** @param {(typeof CLASSES)[number]} b @param {(typeof CLASSES)[number]} c */
  const cell = (b, c) => {
    const n = cmp.transitions[b][c];
    const tone = b === c ? 'same' : b === 'stable_correct' ? 'worse' : c === 'stable_correct' ? 'better' : 'moved';
    const strength = b === c ? 0 : n / max;
    const href = rowsLink({
      ...scope,
      baseline: cmp.baseline_version,
      candidate: cmp.candidate_version,
      from: b,
      to: c,
    });
    return h(
      'td',
      { class: `cell ${tone}`, style: { '--s': strength.toFixed(2) }, 'data-from': b, 'data-to': c },
      h('a', { href, title: `open the ${n} rows in the explorer` }, String(n)),
    );
  };
  return table(
    ['baseline ↓ / candidate →', ...CLASSES.map(className)],
    CLASSES.map((b) =>
      h(
        'tr',
        {},
        h('th', {}, className(b)),
        CLASSES.map((c) => cell(b, c)),
      ),
    ),
    { class: 'matrix', 'data-testid': 'transition-matrix' },
  );
};

/** @param {Divergence | null} d */
const divergenceText = (d) =>
  d
    ? `${d.check} (check ${d.position}): baseline ${d.baseline.map((a) => `${a.answer}×${a.count}`).join(', ')} · candidate ${d.candidate.map((a) => `${a.answer}×${a.count}`).join(', ')}`
    : '';

/**
 * Rows a list shows on the page; the rest are counted. The server sends each list's first 200 rows and its length,
 * so the list's title opens the listed rows in the Rows view.
 */
export const LISTED = 200;

// the server sends each list's first rows and its length (`lists`); `total` is that length
/**
 * @param {readonly string[]} ids
 * @param {{
 *   testid: string,
 *   suspects: ReadonlyMap<string, Suspect>,
 *   tagsOf: (id: string) => string[],
 *   open: (id: string) => void,
 *   href: string,
 *   total?: number,
 * }} opts
 */
const rowList = (ids, { testid, suspects, tagsOf, open, href, total = ids.length }) =>
  ids.length === 0
    ? empty('none')
    : h(
        'ul',
        { class: 'rows scroll-y', 'data-testid': testid },
        ids.slice(0, LISTED).map((id) => {
          const s = suspects.get(id);
          const tags = tagsOf(id);
          return h(
            'li',
            { 'data-row': id, 'data-outcome': s?.outcome ?? '' },
            h('button', { class: 'link', onclick: () => open(id) }, id),
            tags.includes('must_not_break') ? h('span', { class: 'chip mnb' }, 'must-not-break') : null,
            s ? h('span', { class: `chip outcome ${s.outcome}` }, OUTCOME[s.outcome] ?? s.outcome) : null,
            s?.first_divergence
              ? h(
                  'span',
                  { class: 'divergence', 'data-testid': 'first-divergence', 'data-check': s.first_divergence.check },
                  `first divergence: ${divergenceText(s.first_divergence)}`,
                )
              : null,
          );
        }),
        total > Math.min(ids.length, LISTED)
          ? h(
              'li',
              { class: 'note', 'data-testid': 'more-rows' },
              total > ids.length
                ? `… and ${total - Math.min(ids.length, LISTED)} more, counted here and not listed`
                : h('a', { href }, `… and ${total - LISTED} more`),
            )
          : null,
      );

/** @param {Row['versions'][number]['attempts'][number]['checks'][number]['answer'] | undefined} a */
const answerText = (a) => (a === true ? 'yes' : a === false ? 'no' : a === null || a === undefined ? '—' : String(a));

/** @param {string} input */
const requestText = (input) => {
  try {
    const parsed = JSON.parse(input);
    return parsed.message ?? input;
  } catch {
    return input;
  }
};

/** @param {Row} row @param {() => void} close */
const drillDown = (row, close) => {
  const checks = [...new Set(row.versions.flatMap((v) => v.attempts.flatMap((a) => a.checks.map((c) => c.name))))];
  const diverged = row.first_divergence?.check;
  return card(
    `Row ${row.row_id}`,
    h('button', { class: 'close', onclick: close, 'aria-label': 'close' }, '×'),
    h(
      'div',
      { class: 'drill', 'data-testid': 'drill-down', 'data-row': row.row_id },
      row.input ? h('blockquote', {}, requestText(row.input)) : null,
      h(
        'p',
        {},
        'expected: ',
        h('b', {}, row.expected ?? '—'),
        ' · tags: ',
        row.tags.length ? row.tags.join(', ') : 'none',
      ),
      row.first_divergence
        ? h(
            'p',
            { class: 'divergence', 'data-testid': 'drill-divergence', 'data-check': diverged },
            `First divergent check: ${divergenceText(row.first_divergence)}`,
          )
        : h('p', { class: 'note' }, 'The intermediate checks agree between versions.'),
      row.versions.map((v) =>
        h(
          'div',
          { class: 'side' },
          h('h3', {}, `${v.agent_version} — ${className(v.class)} (${v.c}/${v.n} passed)`),
          table(
            ['run', '#', 'output', 'verdict', ...checks, 'failure'],
            v.attempts.map((a) =>
              h(
                'tr',
                { class: a.passed === true ? 'pass' : a.passed === false ? 'fail' : 'ungraded' },
                h('td', {}, a.run_id),
                h('td', {}, String(a.attempt)),
                h('td', {}, a.output ?? '—'),
                h('td', {}, a.passed === true ? '✓' : a.passed === false ? '✗' : 'ungraded'),
                checks.map((name) => {
                  const c = a.checks.find((x) => x.name === name);
                  return h(
                    'td',
                    { class: [name === diverged ? 'diverged' : '', c?.passed === false ? 'wrong' : ''].join(' ') },
                    answerText(c?.answer),
                  );
                }),
                h('td', {}, a.failure_category ?? ''),
              ),
            ),
            { class: 'attempts' },
          ),
        ),
      ),
    ),
  );
};

/** What the confirmation counts mean, said as they are: who ran again on how many suspects, and how to run the rest. */
/**
 * The confirmation runs are the server's (`confirm_commands`, the CLI's formatter): in full when the store knows the
 * dataset file and agent of each version's latest run, with placeholders where it does not.
 * @param {Comparison} cmp @param {Answer<'/api/commands'>} cmds
 */
const confirmationText = (cmp, cmds) => {
  const suspects = cmp.confirmation.rows;
  if (suspects.length === 0)
    return h(
      'p',
      { class: 'note', 'data-testid': 'confirmation-note' },
      'No row was stable-correct on the baseline and not on the candidate: there is nothing to confirm.',
    );
  const ranAgain = suspects.filter(
    (s) => s.baseline.confirmation_attempts > 0 && s.candidate.confirmation_attempts > 0,
  );
  const waiting = suspects.filter((s) => s.outcome === 'unresolved').map((s) => s.row_id);
  const said =
    ranAgain.length === suspects.length
      ? `Both versions ran again on every suspected regression (${suspects.length}).`
      : ranAgain.length === 0
        ? `Neither version has run again on the ${suspects.length} suspected regression${suspects.length === 1 ? '' : 's'}: each stays unresolved until both versions do.`
        : `Both versions ran again on ${ranAgain.length} of the ${suspects.length} suspected regressions; the other ${suspects.length - ranAgain.length} have not been run again on both.`;
  const file = waiting.length
    ? URL.createObjectURL(new Blob([`${waiting.join('\n')}\n`], { type: 'text/plain' }))
    : null;
  return [
    h(
      'p',
      { class: 'note', 'data-testid': 'confirmation-note', 'data-ran-again': ranAgain.length },
      said,
      ' Confirmed: the baseline kept getting it right, the candidate kept getting it wrong.',
    ),
    file
      ? h(
          'p',
          { class: 'note', 'data-testid': 'confirmation-command' },
          `To settle the ${waiting.length} unresolved, save `,
          h('a', { href: file, download: 'suspects.txt', 'data-testid': 'suspects-file' }, 'suspects.txt'),
          ' (their row ids) and run both versions again on them, once with the agent of each:',
          command(cmp.confirm_commands[cmp.baseline_version] ?? ''),
          command(cmp.confirm_commands[cmp.candidate_version] ?? ''),
          cmp.run_sources?.[cmp.baseline_version] && cmp.run_sources?.[cmp.candidate_version]
            ? `The dataset file and agent are those of each version’s latest ${cmds.passk} run (paths as it was given them).`
            : `ROWS.jsonl: the dataset file of this dataset version; AGENT_OF_…: the module, URL or cmd: that version was run with (recorded only by ${cmds.passk} run).`,
        )
      : null,
  ];
};

/**
 * The banner's word on must-not-break rows the gate cannot protect (the baseline is not stable-correct on them), as
 * the Gates view and `passk gate` say it: the rows of this scope as one link to their attempts, the others counted.
 * @param {Gate} gate @param {{ suite: string, dataset_version: string }} scope
 * @param {(extra: Record<string, string | undefined>) => string} link
 */
const unprotectedLine = (gate, scope, link) => {
  const rows = gate.unprotected;
  if (rows.length === 0) return null;
  const here = rows
    .filter((m) => m.suite === scope.suite && m.dataset_version === scope.dataset_version)
    .map((m) => m.row_id);
  const elsewhere = rows.length - here.length;
  const shown = here.slice(0, 10);
  return h(
    'div',
    { class: 'warn', 'data-testid': 'compare-unprotected', 'data-rows': String(rows.length) },
    `⚠ ${rows.length} must-not-break ${rows.length === 1 ? 'row is' : 'rows are'} not protected: the baseline is ` +
      `not stable-correct on ${rows.length === 1 ? 'it' : 'them'}, so no rule binds`,
    here.length
      ? [
          ' — ',
          h(
            'a',
            { href: link({ ids: here.join(',') }) },
            shown.join(', ') + (here.length > shown.length ? ` and ${here.length - shown.length} more` : ''),
          ),
        ]
      : null,
    elsewhere ? ` (${elsewhere} in other suites or datasets)` : null,
  );
};

/** @param {ViewContext} ctx */
export const render = async ({ scope, params, navigate, warn }) => {
  if (!scope)
    return card(
      'Nothing to compare yet',
      empty('Run a second agent version on the same dataset:', command((await api.commands()).add_version)),
    );
  if (scope.versions.length < 2)
    return card(
      'Nothing to compare yet',
      empty(
        `Only ${scope.versions[0]} has trials on this dataset version; run another on it:`,
        command((await api.commands()).add_version),
      ),
    );
  const [baseline, candidate] = await pickVersions(scope, params, warn);
  const q = { suite: scope.suite, dataset_version: scope.dataset_version, baseline, candidate };
  /** @param {string} label @param {string} value @param {'baseline' | 'candidate'} key */
  const pick = (label, value, key) =>
    h(
      'label',
      {},
      label,
      ' ',
      h(
        'select',
        {
          'data-testid': key,
          onchange: (/** @type {Event} */ e) =>
            navigate({ ...q, [key]: /** @type {HTMLSelectElement} */ (e.target).value, row: undefined }),
        },
        scope.versions.map((v) => h('option', { value: v, selected: v === value }, v)),
      ),
    );
  const controls = h(
    'div',
    { class: 'controls' },
    pick('baseline', baseline, 'baseline'),
    pick('candidate', candidate, 'candidate'),
  );
  if (baseline === candidate)
    return h(
      'div',
      {},
      controls,
      card(
        'A version compared with itself',
        h(
          'p',
          { class: 'warn', 'data-testid': 'same-version' },
          `Baseline and candidate are both ${baseline}: a version compared with itself has no change to show, and its rows would pair with themselves. Pick another candidate above.`,
        ),
      ),
    );
  // the comparison, the row, the gates and the commands are independent questions: asked together, not one after another
  const [cmp, row, gates, commands] = await Promise.all([
    api.compare(q),
    params.row ? api.row({ ...q, row_id: params.row, versions: `${baseline},${candidate}` }) : null,
    api.gates({ suite: scope.suite }),
    api.commands(),
  ]);
  if (!cmp) return h('div', {}, controls, card('No comparison', empty('These versions share no rows.')));
  const suspects = new Map(cmp.confirmation.rows.map((s) => [s.row_id, s]));
  /** @param {string} row */
  const open = (row) => navigate({ ...q, row });
  if (params.row && !row)
    warn(`No row "${params.row}" (row=) in ${scope.suite} · dataset ${scope.dataset_version} for these versions.`);
  const mnb = new Set(cmp.must_not_break_rows ?? []);
  /** @param {string} id */
  const tagged = (id) => (mnb.has(id) ? ['must_not_break'] : []);
  const counts = cmp.confirmation.counts;
  const gate = gates.find(
    (g) => g.dataset_version === scope.dataset_version && g.baseline === baseline && g.candidate === candidate,
  );
  /** @param {Record<string, string | undefined>} extra */
  const link = (extra) => rowsLink({ ...q, ...extra });
  const improved = cmp.lists?.became_stable_correct ?? cmp.became_stable_correct.length;
  const regressed = cmp.lists?.lost_stable_correct ?? cmp.lost_stable_correct.length;
  const improvedHref = link({ from: undefined, ids: cmp.became_stable_correct.join(',') });
  const regressedHref = link({ ids: cmp.lost_stable_correct.join(',') });
  return h(
    'div',
    { class: 'compare' },
    controls,
    gate
      ? h(
          'section',
          {
            class: `card verdict-banner ${gate.verdict}`,
            'data-testid': 'compare-verdict',
            'data-verdict': gate.verdict,
          },
          h('span', { class: `verdict ${gate.verdict}` }, gate.verdict === 'pass' ? 'PASS' : 'FAIL'),
          h(
            'div',
            {},
            h('b', {}, `Gate ${gate.verdict === 'pass' ? 'passed' : 'failed'}: ${baseline} → ${candidate}. `),
            gate.reasons
              .filter((r) => !r.passed)
              .map((r) =>
                h(
                  'div',
                  {},
                  `✗ ${ruleName(r.rule)}`,
                  r.rows.length ? [' — ', h('a', { href: link({ ids: r.rows.join(',') }) }, r.rows.join(', '))] : null,
                ),
              ),
            unprotectedLine(gate, scope, link),
            h(
              'a',
              { href: `#/gates?suite=${encodeURIComponent(scope.suite)}&gate=${gate.gate_id}` },
              'the full verdict',
            ),
          ),
        )
      : null,
    row ? drillDown(row, () => navigate({ ...q })) : null,
    card(
      `${cmp.baseline_version} → ${cmp.candidate_version}`,
      h('p', { class: 'evidence', 'data-testid': 'screening' }, screeningLine(cmp)),
      headline(cmp),
      h(
        'p',
        { class: 'note', 'data-testid': 'mcnemar' },
        `Exact McNemar on stable-correct over ${cmp.mcnemar.rows} rows: ${cmp.mcnemar.lost} lost, ${cmp.mcnemar.gained} gained, p = ${cmp.mcnemar.p_value.toPrecision(3)}.`,
      ),
    ),
    h(
      'div',
      { class: 'cards two' },
      card('Class transitions', matrix(cmp, { suite: scope.suite, dataset_version: scope.dataset_version })),
      card(
        'Confirmation of suspected regressions',
        h(
          'p',
          {},
          `${counts.confirmed_regression} confirmed · ${counts.baseline_also_varies} baseline also varies · ${counts.unresolved} unresolved · ${counts.cleared} cleared`,
        ),
        confirmationText(cmp, commands),
      ),
    ),
    h(
      'div',
      { class: 'cards two' },
      card(
        h('a', { href: improvedHref }, `Became stable-correct (${improved})`),
        rowList(cmp.became_stable_correct, {
          total: improved,
          testid: 'improved-list',
          suspects,
          tagsOf: tagged,
          open,
          href: improvedHref,
        }),
      ),
      card(
        h('a', { href: regressedHref }, `Stable-correct on the baseline, not on the candidate (${regressed})`),
        h(
          'p',
          { class: 'note' },
          'Kept even when every headline metric improves: these are the decisions someone was already trusting.',
        ),
        rowList(cmp.lost_stable_correct, {
          total: regressed,
          testid: 'regressed-list',
          suspects,
          tagsOf: tagged,
          open,
          href: regressedHref,
        }),
      ),
    ),
  );
};
