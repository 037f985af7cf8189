// @ts-check
import { api } from '../api.js';
import { barChart, passKChart, PALETTE } from '../charts.js';
import { card, ci, className, command, empty, h, pct, table } from '../dom.js';
import { rowsLink } from './rows.js';
/**
 * @import { Answer } from '../../contract.ts'
 * @import { Params, Scope, ViewContext } from '../view.d.ts'
 * @typedef {Answer<'/api/overview'>[number]} Group
 * @typedef {(extra: Record<string, string | undefined>) => string} RowsLink
 */

/** The versions the explorer compares: the first two of the scope (one version is compared with itself). */
/** @param {readonly Group[]} groups @returns {[string | undefined, string | undefined]} */
const pairOf = (groups) => [groups[0]?.agent_version, groups[1]?.agent_version ?? groups[0]?.agent_version];

/** The overview takes no parameter of its own (the scope only). */
/** @type {string[]} */
export const params = [];
export const title = 'Overview';
/**
 * The question render asks for the scope the URL names, asked beside the list of suites and versions (app.js).
 * @param {Params} params with suite and dataset_version
 */
export const prefetch = (params) =>
  api.ahead('/api/overview', { suite: params.suite ?? '', dataset_version: params.dataset_version ?? '' });

const CLASSES = /** @type {const} */ (['stable_correct', 'stable_wrong', 'flip', 'unclassified']);

/**
 * @param {string} version
 * @param {string} key
 * @param {string} label
 * @param {number | null | undefined} value
 * @param {readonly [number, number] | null | undefined} interval
 * @param {string} [note]
 */
const metric = (version, key, label, value, interval, note) =>
  h(
    'div',
    {
      class: 'metric',
      'data-metric': key,
      'data-version': version,
      'data-value': value === null || value === undefined ? '' : String(value),
    },
    h('div', { class: 'label' }, label),
    h('div', { class: 'value' }, pct(value)),
    h('div', { class: 'ci' }, interval ? `95% ${ci(interval)}` : ''),
    note ? h('div', { class: 'note' }, note) : null,
  );

/** @param {Group} g */
const evidence = (g) => {
  const a = g.attempts_per_row;
  const per = a.min === a.max ? `${a.min}` : `${a.min}–${a.max}`;
  return h(
    'p',
    { class: 'evidence', 'data-testid': 'evidence' },
    `${g.rows} rows · ${g.trials} graded trials · ${per} attempts per row · ${g.ungraded} ungraded`,
    g.rows_without_graded ? ` · ${g.rows_without_graded} rows without a graded attempt (left out)` : '',
  );
};

/**
 * When the source declared the attempts per row (`passk run --k`, an import's epochs or trials) and some rows have
 * fewer recorded: how many, and that K is the declared one (the line `passk report` prints).
 * @param {Group} g
 */
const shortRows = (g) => {
  if (g.declared_k === null || g.rows_short === 0) return null;
  const rows = g.rows + g.rows_without_graded;
  return h(
    'p',
    { class: 'note', 'data-testid': 'rows-short', 'data-value': String(g.rows_short) },
    `${g.rows_short} of ${rows} rows ${g.rows_short === 1 ? 'has' : 'have'} fewer attempts recorded than the ` +
      `${g.declared_k} per row the source declared (missing from it); K is what was declared, not the fewest found.`,
  );
};

/** Every count opens the row explorer: a version's class on its side of the scope's pair, a check's flipping rows. */
/**
 * @param {Scope} scope
 * @param {[string | undefined, string | undefined]} pair
 * @returns {(g: Group, i: number) => HTMLElement}
 */
const versionCard = (scope, pair) => (g, i) => {
  /** @type {RowsLink} */
  const link = (extra) =>
    rowsLink({
      suite: scope.suite,
      dataset_version: scope.dataset_version,
      baseline: pair[0],
      candidate: pair[1],
      ...extra,
    });
  const k = g.k_max;
  const iv = g.intervals;
  return h(
    'section',
    {
      class: 'card version',
      'data-testid': 'version-card',
      'data-version': g.agent_version,
      style: { borderTopColor: PALETTE[i % PALETTE.length] },
    },
    h('h2', {}, g.agent_version),
    evidence(g),
    shortRows(g),
    h(
      'div',
      { class: 'metrics' },
      metric(
        g.agent_version,
        'mean_accuracy',
        'mean accuracy',
        g.mean_accuracy,
        iv.mean_accuracy.clustered,
        'share of all trials that passed',
      ),
      metric(g.agent_version, 'pass_at_1', 'pass@1', g.pass_at_1, iv.pass_at_k['1'], 'first-try success'),
      metric(
        g.agent_version,
        `pass_hat_${k}`,
        `pass^${k}`,
        g.pass_hat_k[String(k)],
        iv.pass_hat_k[String(k)],
        `right on all ${k} attempts`,
      ),
      metric(
        g.agent_version,
        'flip_rate',
        'flip rate',
        g.flip_rate,
        iv.flip_rate.bootstrap,
        'rows whose verdicts disagree',
      ),
    ),
    h('h3', {}, 'Stability classes'),
    barChart(
      CLASSES.map(className),
      CLASSES.map((c) => g.classes[c]),
      { color: PALETTE[i % PALETTE.length], label: `stability classes of ${g.agent_version}` },
    ),
    h(
      'p',
      { class: 'classes', 'data-testid': 'classes' },
      CLASSES.map((c) =>
        h(
          'a',
          {
            class: `chip ${c}`,
            'data-class': c,
            'data-value': g.classes[c],
            href: link({ [g.agent_version === pair[0] ? 'from' : 'to']: c }),
            title: `the ${g.classes[c]} ${className(c)} rows of ${g.agent_version}, in the row explorer`,
          },
          `${className(c)} ${g.classes[c]}`,
        ),
      ),
    ),
    g.checks.length
      ? [
          h('h3', {}, 'Intermediate checks: rows whose answers flip'),
          table(
            ['check', 'flipping rows', 'rate'],
            g.checks.map((c) =>
              h(
                'tr',
                {},
                h('td', {}, c.name),
                h(
                  'td',
                  {},
                  h('a', { href: link({ check: c.name }), 'data-check': c.name }, `${c.flipping_rows} / ${c.rows}`),
                ),
                h('td', {}, pct(c.flip_rate)),
              ),
            ),
          ),
          g.stable_verdict_check_flips.length ? hiddenFlips(link, g.stable_verdict_check_flips) : null,
        ]
      : null,
  );
};

/** @param {ViewContext} ctx */
export const render = async ({ scope }) => {
  if (!scope)
    return card(
      'No trials yet',
      empty(
        'Record trials',
        command((await api.commands()).record),
        'or import them, or record them with the SDK; this page fills in as they arrive.',
      ),
    );
  const groups = await api.overview({ suite: scope.suite, dataset_version: scope.dataset_version });
  if (groups.length === 0) return card('No trials yet', empty('Nothing recorded for this scope.'));
  const kMax = Math.max(...groups.map((g) => g.k_max));
  return h(
    'div',
    { class: 'overview' },
    h(
      'p',
      { class: 'lede' },
      `${scope.suite} · dataset ${scope.dataset_version}: mean accuracy, pass^k and flip rate side by side — none of them goes on the report alone.`,
    ),
    h('div', { class: 'cards' }, groups.map(versionCard(scope, pairOf(groups)))),
    card(
      'pass^k and pass@k by k',
      h(
        'p',
        { class: 'note' },
        'pass^k: all k attempts succeed (solid); pass@k: at least one of k succeeds (dashed). Bands: 95% bootstrap intervals over rows.',
      ),
      passKChart(
        groups.map((g) => ({
          name: g.agent_version,
          passHat: g.pass_hat_k,
          passHatCI: g.intervals.pass_hat_k,
          passAt: g.pass_at_k,
          passAtCI: g.intervals.pass_at_k,
        })),
        kMax,
      ),
    ),
  );
};

/** "N rows keep a stable verdict while a check flips": N distinct rows (one row can flip several checks). */
/**
 * @param {RowsLink} link
 * @param {Group['stable_verdict_check_flips']} flips
 */
function hiddenFlips(link, flips) {
  const ids = [...new Set(flips.map((f) => f.row_id))];
  return h(
    'p',
    { class: 'note' },
    h(
      'a',
      { href: link({ ids: ids.join(',') }), 'data-testid': 'hidden-flips' },
      ids.length === 1 ? '1 row' : `${ids.length} rows`,
    ),
    ids.length === 1
      ? ' keeps a stable verdict while a check flips underneath it.'
      : ' keep a stable verdict while a check flips underneath it.',
  );
}
