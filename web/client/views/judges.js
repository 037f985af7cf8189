// @ts-check
import { api } from '../api.js';
import { card, ci, command, empty, h, pct, table } from '../dom.js';
/**
 * @import { Answer } from '../../contract.ts'
 * @import { Params, ViewContext } from '../view.d.ts'
 * @typedef {Answer<'/api/judges'>[number]} Judge
 * @typedef {Judge['agreement']['confusion']} Confusion
 */

/** A confusion cell opened: its judge, the human label (row) and the judge's call (column). */
export const params = ['judge', 'human', 'call'];
export const title = 'Judges';

/** @param {number | null | undefined} x @param {number} [d] */
const num = (x, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));

/** The confusion matrix; each cell with items opens the list of those items (`#/judges?judge=…&human=…&call=…`). */
/**
 * @param {Confusion} c
 * @param {string} judgeId
 * @param {Params} params
 * @param {ViewContext['navigate']} go
 */
const confusion = (c, judgeId, params, go) =>
  table(
    ['human ↓ / judge →', ...c.labels],
    c.labels.map((hl) =>
      h(
        'tr',
        {},
        h('th', {}, hl),
        c.labels.map((jl) => {
          const n = c.matrix[hl]?.[jl] ?? 0;
          const open = params.judge === judgeId && params.human === hl && params.call === jl;
          return h(
            'td',
            {
              class: `${hl === jl ? 'cell same' : 'cell worse'}${open ? ' selected' : ''}`,
              style: { '--s': '0.5' },
              'data-human': hl,
              'data-judge': jl,
            },
            n > 0 && c.items
              ? h(
                  'a',
                  {
                    href: '#',
                    title: `the ${n} items humans labeled ${hl} and the judge called ${jl}`,
                    onclick: (/** @type {Event} */ e) => (
                      e.preventDefault(),
                      go(open ? {} : { judge: judgeId, human: hl, call: jl })
                    ),
                  },
                  String(n),
                )
              : String(n),
          );
        }),
      ),
    ),
    { class: 'matrix', 'data-testid': 'confusion' },
  );

/** @param {Confusion} c @param {Params} params */
const cellItems = (c, params) => {
  const ids = c.items?.[params.human ?? '']?.[params.call ?? ''];
  if (!ids) return null;
  return h(
    'div',
    { class: 'cell-items', 'data-testid': 'cell-items', 'data-count': ids.length },
    h(
      'h3',
      {},
      `${ids.length} item${ids.length === 1 ? '' : 's'} humans labeled ${params.human}, the judge called ${params.call}`,
    ),
    h('p', { class: 'ids' }, ids.join(', ')),
  );
};

/** @param {Judge} j @param {Params} params @param {ViewContext['navigate']} go */
const judgeCard = (j, params, go) => {
  const name = `${j.judge.id}${j.judge.version ? `@${j.judge.version}` : ''}`;
  const section = card(
    name,
    h(
      'p',
      { class: 'note' },
      `rubric ${j.judge.rubric_version} · ${j.items} items judged · ${j.human.items} with a human label${j.human.ambiguous ? ` (${j.human.ambiguous} ambiguous)` : ''}`,
    ),
    h(
      'div',
      { class: 'metrics' },
      h(
        'div',
        { class: 'metric', 'data-metric': 'kappa', 'data-value': j.agreement.kappa ?? '' },
        h('div', { class: 'label' }, "Cohen's κ"),
        h('div', { class: 'value' }, num(j.agreement.kappa)),
      ),
      h(
        'div',
        { class: 'metric', 'data-metric': 'agreement', 'data-value': j.agreement.agreement ?? '' },
        h('div', { class: 'label' }, 'agreement with humans'),
        h('div', { class: 'value' }, pct(j.agreement.agreement)),
        h('div', { class: 'ci' }, ci(j.agreement.interval)),
      ),
      h(
        'div',
        { class: 'metric', 'data-metric': 'position_swap', 'data-value': j.position_swap.rate ?? '' },
        h('div', { class: 'label' }, 'position-swap inconsistency'),
        h('div', { class: 'value' }, pct(j.position_swap.rate)),
        h('div', { class: 'ci' }, `${j.position_swap.flagged} / ${j.position_swap.items} pairs`),
      ),
      h(
        'div',
        { class: 'metric', 'data-metric': 'self_consistency' },
        h('div', { class: 'label' }, 'self-inconsistency'),
        h('div', { class: 'value' }, pct(j.self_consistency.rate)),
        h('div', { class: 'ci' }, `${j.self_consistency.flagged} / ${j.self_consistency.items} items`),
      ),
    ),
    j.agreement.items
      ? [
          h('h3', {}, 'Confusion (rows: human label)'),
          confusion(j.agreement.confusion, j.judge.id, params, go),
          params.judge === j.judge.id ? cellItems(j.agreement.confusion, params) : null,
        ]
      : null,
    h(
      'p',
      { class: 'note' },
      `Verbosity bias (score vs output length within a human label): ${num(j.verbosity_bias.correlation)}` +
        (j.scores.items
          ? ` · Spearman ${num(j.scores.spearman)} · MAE ${num(j.scores.mae)} on ${j.scores.items} scored items`
          : ''),
    ),
  );
  section.dataset.testid = 'judge';
  section.dataset.judge = j.judge.id;
  return section;
};

/** @param {ViewContext} ctx */
export const render = async ({ params, navigate, warn }) => {
  const judges = await api.judges();
  const judge = judges.find((j) => j.judge.id === params.judge);
  if (params.judge && !judge)
    warn(
      `No judge "${params.judge}" (judge=); calibrated judges: ${judges.map((j) => j.judge.id).join(', ') || 'none'}.`,
    );
  else if (
    judge &&
    (params.human || params.call) &&
    !judge.agreement.confusion?.items?.[params.human ?? '']?.[params.call ?? '']
  )
    warn(
      `No items labeled "${params.human ?? ''}" (human=) and called "${params.call ?? ''}" (call=) for ${params.judge}.`,
    );
  if (judges.length === 0)
    return card(
      'No judge calibration yet',
      empty(
        'Grade with a judge',
        command((await api.commands()).judge),
        'and record human labels on the same items with the SDK (recorder.recordLabel).',
      ),
    );
  return h(
    'div',
    { class: 'cards' },
    judges.map((j) => judgeCard(j, params, navigate)),
  );
};
