// @ts-check
/* global document, location, history, Blob, URLSearchParams */
import { api } from '../api.js';
import { card, className, command, empty, h, usd } from '../dom.js';
import { toCsv } from '../csv.js';
/**
 * @import { Answer, Query } from '../../contract.ts'
 * @import { Params, ViewContext } from '../view.d.ts'
 * @typedef {Answer<'/api/rows'>} RowPage
 * @typedef {RowPage['rows'][number]} ExplorerRow
 * @typedef {ExplorerRow['versions'][string]} ExplorerVersion
 * @typedef {NonNullable<Answer<'/api/row'>>} Row
 * @typedef {Row['versions'][number]['attempts'][number]} Attempt
 * @typedef {NonNullable<Row['aligned'][number]['diff']>} Diff
 * @typedef {Omit<Query<'/api/rows'>, 'suite' | 'dataset_version' | 'row' | 'offset' | 'limit'>} Filters
 * @typedef {Record<string, string | undefined>} State the view's URL parameters, as the filters change them
 */

/**
 * The row explorer: every row of a scope, one line each, with per version the class, passes over graded attempts,
 * the checks whose answers flip, output flips, failure categories, mean latency and cost. Search, filters and the
 * sort live in the URL (deep links) and are applied by the server, which answers one page of rows (PAGE) with the
 * count it kept: the page holds a bounded number of rows whatever the scope's size. The CSV / JSON export is every
 * row the filters keep. A row opens the attempt diff in a side panel that leaves the list (and its scroll) where it
 * was; j / k (or ↓ / ↑) move to the next / previous kept row, across pages.
 */
export const title = 'Rows';

const CLASSES = ['stable_correct', 'stable_wrong', 'flip', 'unclassified'];
const FILTERS = ['q', 'from', 'to', 'tag', 'check', 'category', 'ids', 'sort', 'dir'];
/** The two versions, the row open in the panel, the page's first row, and the filters and sort. */
export const params = ['baseline', 'candidate', 'row', 'offset', ...FILTERS];
/** Rows on one page of the table. */
export const PAGE = 200;
/**
 * The filters of the URL, as the server takes them: the classes (from=, to=) are checked in render, the sort and
 * its direction are what the headers set.
 * @param {Params} state
 * @returns {Filters}
 */
const filtersOf = (state) =>
  Object.fromEntries(['baseline', 'candidate', ...FILTERS].map((k) => [k, state[k]]).filter(([, v]) => v));

/** @param {string | null | undefined} input */
const requestText = (input) => {
  if (input === null || input === undefined) return '';
  try {
    const parsed = JSON.parse(input);
    return typeof parsed?.message === 'string' ? parsed.message : input;
  } catch {
    return input;
  }
};
/** @param {number | null | undefined} x */
const ms = (x) => (x === null || x === undefined ? '—' : `${Math.round(x)} ms`);
/** @param {Attempt['checks'][number]['answer'] | undefined} a */
const answerText = (a) => (a === true ? 'yes' : a === false ? 'no' : a === null || a === undefined ? '—' : String(a));

/** What the table shows, as flat records: the export's columns. */
/** @param {readonly ExplorerRow[]} rows @param {readonly string[]} versions */
export const exportRecords = (rows, versions) =>
  rows.map((r) => {
    /** @type {Record<string, string | number>} */
    const out = { row_id: r.row_id, input: requestText(r.input), expected: r.expected ?? '', tags: r.tags.join(' ') };
    for (const [label, v] of versions.map((v, i) => [i === 0 ? 'baseline' : 'candidate', v])) {
      /** @type {ExplorerVersion | undefined} */
      const x = r.versions[v];
      out[`${label}_version`] = v;
      out[`${label}_class`] = x?.class ?? 'unclassified';
      out[`${label}_passed`] = x?.c ?? 0;
      out[`${label}_graded`] = x?.n ?? 0;
      out[`${label}_flipping_checks`] = (x?.flipping_checks ?? []).join(' ');
      out[`${label}_output_flip`] =
        x?.output_flip === null || x?.output_flip === undefined ? '' : String(x.output_flip);
      out[`${label}_mean_latency_ms`] = x?.mean_latency_ms ?? '';
      out[`${label}_mean_cost_usd`] = x?.mean_cost_usd ?? '';
    }
    return out;
  });

/** @param {string} name @param {string} type @param {string} text */
const download = (name, type, text) => {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
};

/** Replaces the URL's parameters without a render (the table redraws in place, focus stays in the search box). */
/** @param {State} params */
const setParams = (params) => {
  const clean = /** @type {Record<string, string>} */ (
    Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''))
  );
  history.replaceState(null, '', `#/rows?${new URLSearchParams(clean)}`);
};

/** @param {ExplorerVersion | undefined} v */
const versionCells = (v) =>
  v
    ? [
        h('td', {}, h('span', { class: `chip ${v.class}` }, className(v.class))),
        h('td', { class: 'num' }, `${v.c}/${v.n}`),
        h('td', {}, v.flipping_checks.join(', ')),
        h('td', {}, v.output_flip ? 'yes' : ''),
        h('td', { class: 'num' }, ms(v.mean_latency_ms)),
        h('td', { class: 'num' }, usd(v.mean_cost_usd)),
      ]
    : [h('td', { colspan: 6, class: 'note' }, 'no trials')];

/** The attempt diff: both versions side by side, aligned by attempt. */
/** @param {Row} row @param {() => void} close */
const diffPanel = (row, close) => {
  const [b, c] = row.versions;
  const names = [...new Set(row.versions.flatMap((v) => v.attempts.flatMap((a) => a.checks.map((x) => x.name))))];
  const diverged = row.first_divergence?.check;
  /**
   * @param {Attempt | null | undefined} attempt
   * @param {Diff | null} diff
   * @param {'baseline' | 'candidate'} side
   */
  const outputCell = (attempt, diff, side) => {
    if (!attempt) return h('td', { class: 'note' }, '—');
    const parts = diff
      ? diff
          .filter((p) => (side === 'baseline' ? !p.added : !p.removed))
          .map((p) => (p.added || p.removed ? h(p.added ? 'ins' : 'del', {}, p.value) : p.value))
      : [attempt.output ?? '—'];
    return h(
      'td',
      { class: `attempt ${attempt.passed === true ? 'pass' : attempt.passed === false ? 'fail' : 'ungraded'}` },
      h(
        'div',
        { class: 'verdictline' },
        attempt.passed === true ? '✓ right' : attempt.passed === false ? '✗ wrong' : 'ungraded',
        h('small', {}, ` · ${attempt.run_id} #${attempt.attempt}`),
      ),
      h('div', { class: 'output', 'data-field': 'output' }, parts),
      h(
        'div',
        { class: 'checks' },
        names.map((n) => {
          const x = attempt.checks.find((y) => y.name === n);
          return h(
            'span',
            {
              class: `check ${x?.passed === false ? 'wrong' : ''} ${n === diverged ? 'diverged' : ''}`,
              'data-check': n,
              'data-wrong': x?.passed === false ? 'true' : 'false',
              title: n,
            },
            `${n.replaceAll('_', ' ')}: ${answerText(x?.answer)}`,
          );
        }),
      ),
      h(
        'div',
        { class: 'note' },
        [
          attempt.latency_ms === null ? null : ms(attempt.latency_ms),
          attempt.cost_usd === null ? null : usd(attempt.cost_usd),
          attempt.tokens ? `${attempt.tokens.input} → ${attempt.tokens.output} tokens` : null,
        ]
          .filter(Boolean)
          .join(' · ') || 'no latency, cost or token counts recorded',
      ),
      attempt.actions.length || attempt.retrieved_refs.length
        ? h(
            'details',
            { class: 'transcript' },
            h('summary', {}, `transcript: ${attempt.actions.length} actions, ${attempt.retrieved_refs.length} refs`),
            attempt.actions.map((a) => h('pre', {}, `${a.tool}(${JSON.stringify(a.arguments ?? {}, null, 1)})`)),
            attempt.retrieved_refs.length ? h('p', {}, `retrieved: ${attempt.retrieved_refs.join(', ')}`) : null,
          )
        : null,
    );
  };
  const expected = b?.attempts[0]?.checks ?? c?.attempts[0]?.checks ?? [];
  return h(
    'aside',
    { class: 'panel', 'data-testid': 'attempt-diff', 'data-row': row.row_id, role: 'dialog', 'aria-label': 'attempts' },
    h(
      'div',
      { class: 'panel-head' },
      h('h2', {}, `Row ${row.row_id}`),
      h('span', { class: 'note' }, 'j / k: next / previous · Esc: close'),
      h('button', { class: 'close', onclick: close, 'aria-label': 'close' }, '×'),
    ),
    row.input ? h('blockquote', {}, requestText(row.input)) : null,
    h(
      'details',
      { class: 'transcript' },
      h('summary', {}, 'input (raw)'),
      h('pre', { 'data-field': 'input' }, row.input ?? '—'),
    ),
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
          { class: 'divergence', 'data-testid': 'diff-divergence', 'data-check': diverged },
          `First divergent check: ${row.first_divergence.check.replaceAll('_', ' ')} (check ${row.first_divergence.position})`,
        )
      : null,
    h(
      'div',
      { class: 'scroll table-box' },
      h(
        'table',
        { class: 'sidebyside' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, '#'),
            row.versions.map((v) =>
              h(
                'th',
                { 'data-version': v.agent_version },
                `${v.agent_version} — ${className(v.class)} (${v.c}/${v.n})`,
              ),
            ),
          ),
          expected.length
            ? h(
                'tr',
                { class: 'expected', 'data-testid': 'expected-checks' },
                h('th', {}, 'expected'),
                h(
                  'td',
                  { colspan: row.versions.length },
                  h(
                    'div',
                    { class: 'checks' },
                    names.map((n) => {
                      const x = row.versions
                        .flatMap((v) => v.attempts)
                        .flatMap((a) => a.checks)
                        .find((y) => y.name === n && y.passed !== null && y.passed !== undefined);
                      // The expected answer: a right answer as given, a wrong boolean answer negated.
                      const want = !x
                        ? '—'
                        : x.passed
                          ? x.answer
                          : typeof x.answer === 'boolean'
                            ? !x.answer
                            : '≠ ' + x.answer;
                      return h(
                        'span',
                        { class: 'check', 'data-check': n },
                        `${n.replaceAll('_', ' ')}: ${answerText(want)}`,
                      );
                    }),
                  ),
                ),
              )
            : null,
        ),
        h(
          'tbody',
          {},
          row.aligned.map((a) =>
            h(
              'tr',
              { 'data-attempt': a.index },
              h('th', {}, String(a.index + 1)),
              outputCell(a.baseline === null ? null : b?.attempts[a.baseline], a.diff, 'baseline'),
              c ? outputCell(a.candidate === null ? null : c.attempts[a.candidate], a.diff, 'candidate') : null,
            ),
          ),
        ),
      ),
    ),
  );
};

/** @type {((e: KeyboardEvent) => void) | null} */
let keyHandler = null;

/**
 * A page of rows as the server takes the question: the scope, the filters of `q`, the row open in the panel.
 * @param {{ suite: string, dataset_version: string }} base
 * @param {Params} q
 * @param {string | undefined} row
 * @param {{ offset?: number, limit?: number }} extra
 * @returns {Query<'/api/rows'>}
 */
const question = (base, q, row, extra) => ({ ...base, ...filtersOf(q), row, limit: PAGE, ...extra });
/** The page's first row the URL names (offset=), if it is a number. @param {Params} params */
const offsetOf = (params) =>
  Number.isInteger(Number(params.offset)) && params.offset ? Number(params.offset) : undefined;

/**
 * The first page render asks for the scope the URL names, asked beside the list of suites and versions (app.js);
 * with an unknown class in from= or to= render asks without it, so nothing is asked ahead.
 * @param {Params} params with suite and dataset_version
 */
export const prefetch = (params) => {
  if (['from', 'to'].some((p) => params[p] && !CLASSES.includes(params[p] ?? ''))) return;
  const base = { suite: params.suite ?? '', dataset_version: params.dataset_version ?? '' };
  api.ahead('/api/rows', question(base, params, params.row, { offset: offsetOf(params) }));
};

/** @param {ViewContext} ctx */
export const render = async ({ scope, params: asked, go }) => {
  // a copy: an unknown class is dropped from it
  /** @type {State} */
  const params = { ...asked };
  if (!scope)
    return card(
      'No rows yet',
      empty('Run', command((await api.commands()).demo), 'or record trials; every row shows up here.'),
    );
  const base = { suite: scope.suite, dataset_version: scope.dataset_version };
  const warnings = [];
  for (const p of ['from', 'to'])
    if (params[p] && !CLASSES.includes(params[p])) {
      warnings.push(`Unknown class "${params[p]}" in ${p}= (one of ${CLASSES.join(', ')}); ignored.`);
      delete params[p];
    }
  /** @param {Params} q @param {{ offset?: number, limit?: number }} [extra] */
  const ask = (q, extra = {}) => api.rows(question(base, q, params.row, extra));
  const offset0 = offsetOf(params);
  let page = await ask(params, { offset: offset0 });
  for (const key of ['baseline', 'candidate'])
    if (params[key] && !page.versions.includes(params[key]))
      warnings.push(
        `No trials of version "${params[key]}" (${key}=) in ${scope.suite} · dataset ${scope.dataset_version}; its versions: ${page.versions.join(', ')}.`,
      );
  let versions = /** @type {string[]} */ (
    [params.baseline, params.candidate].filter((v) => v && page.versions.includes(v))
  );
  if (versions.length < 2) {
    const gates = await api.gates({ suite: scope.suite });
    const last = gates.find((g) => g.dataset_version === scope.dataset_version);
    versions = last
      ? [last.baseline, last.candidate]
      : /** @type {string[]} */ ([page.baseline, page.candidate].filter(Boolean));
    if (versions[0] !== page.baseline || versions[1] !== page.candidate)
      page = await ask({ ...params, baseline: versions[0], candidate: versions[1] }, { offset: offset0 });
  }
  const [baseline, candidate] = versions;
  if (params.check && !page.checks.includes(params.check)) warnings.push(`No check named "${params.check}" here.`);
  /** @type {State} */
  const state = { ...params, suite: scope.suite, dataset_version: scope.dataset_version, baseline, candidate };
  delete state.row;
  delete state.offset;

  const body = h('tbody', {});
  const countBox = h('span', { 'data-testid': 'row-count' });
  const pager = h('span', { class: 'pager', 'data-testid': 'pager' });
  /** @type {ExplorerRow[]} */
  let shown = [];
  /** @param {string} id */
  const openRow = (id) => go('rows', { ...state, row: id });
  const paint = () => {
    shown = page.rows;
    countBox.textContent = `${page.total} of ${page.rows_total} rows`;
    countBox.dataset.count = String(page.total);
    const last = Math.min(page.offset + page.limit, page.total);
    /** @param {number} offset */
    const turn = (offset) => draw({ offset });
    pager.replaceChildren(
      ...(page.total > page.limit
        ? [
            h(
              'button',
              { disabled: page.offset === 0, onclick: () => turn(Math.max(0, page.offset - page.limit)) },
              '‹',
            ),
            ` rows ${page.offset + 1}–${last} `,
            h('button', { disabled: last >= page.total, onclick: () => turn(page.offset + page.limit) }, '›'),
          ]
        : []),
    );
    body.replaceChildren(
      ...shown.map((r) =>
        h(
          'tr',
          {
            'data-row': r.row_id,
            class: r.row_id === params.row ? 'selected' : '',
            tabindex: 0,
            onclick: () => openRow(r.row_id),
            onkeydown: (/** @type {KeyboardEvent} */ e) => e.key === 'Enter' && openRow(r.row_id),
          },
          h('td', {}, h('button', { class: 'link' }, r.row_id)),
          h('td', { class: 'input', title: requestText(r.input) }, requestText(r.input)),
          h(
            'td',
            {},
            r.tags.map((t) =>
              h('span', { class: `chip ${t === 'must_not_break' ? 'mnb' : ''}` }, t.replaceAll('_', '-')),
            ),
          ),
          versionCells(r.versions[baseline]),
          versionCells(r.versions[candidate]),
        ),
      ),
    );
  };
  // the latest question wins: an answer to an older one (typing fast in the search box) is dropped
  // (body data-rows-asked / data-rows-shown: the latest question, and the one on the page)
  /** @param {{ offset?: number }} [extra] */
  const draw = async (extra = {}) => {
    const mine = Number(document.body.dataset.rowsAsked ?? 0) + 1;
    document.body.dataset.rowsAsked = String(mine);
    const next = await ask(state, extra);
    if (String(mine) !== document.body.dataset.rowsAsked) return;
    page = next;
    paint();
    document.body.dataset.rowsShown = String(mine);
  };
  /** Every row the filters keep, a page of the largest size at a time (the export). */
  const keptRows = async () => {
    const out = [];
    for (let offset = 0; ; offset += 1000) {
      const p = await ask(state, { offset, limit: 1000 });
      for (const r of p.rows) out.push(r);
      if (offset + 1000 >= p.total) return out;
    }
  };
  /** @param {string} k @param {string} v */
  const set = (k, v) => {
    state[k] = v || undefined;
    setParams({ ...state, row: params.row });
    draw();
  };
  /** @param {string} k @param {string} label @param {readonly (readonly [string, string])[]} options */
  const select = (k, label, options) =>
    h(
      'label',
      {},
      `${label} `,
      h(
        'select',
        {
          'data-filter': k,
          onchange: (/** @type {Event} */ e) => set(k, /** @type {HTMLSelectElement} */ (e.target).value),
        },
        h('option', { value: '' }, 'any'),
        options.map(([value, text]) => h('option', { value, selected: state[k] === value }, text)),
      ),
    );
  const classOptions = CLASSES.map((c) => /** @type {const} */ ([c, className(c)]));
  const { tags } = page;
  /** @param {string} label @param {string} k */
  const sortHead = (label, k) =>
    h(
      'th',
      {
        class: 'sortable',
        'data-sort': k,
        'aria-sort':
          state.sort === k || (!state.sort && k === 'row')
            ? state.dir === 'desc'
              ? 'descending'
              : 'ascending'
            : 'none',
        onclick: (/** @type {MouseEvent} */ e) => {
          const head = /** @type {HTMLTableCellElement} */ (e.currentTarget);
          const desc = (state.sort ?? 'row') === k && state.dir !== 'desc';
          state.sort = k;
          state.dir = desc ? 'desc' : undefined;
          for (const th of /** @type {HTMLTableRowElement} */ (head.parentNode).children)
            th.setAttribute('aria-sort', 'none');
          head.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
          setParams({ ...state, row: params.row });
          draw();
        },
      },
      label,
    );
  /** @param {'b' | 'c'} side */
  const versionHeads = (side) => [
    sortHead('class', `${side}.class`),
    sortHead('passed', `${side}.rate`),
    h('th', {}, 'flipping checks'),
    h('th', {}, 'output flip'),
    sortHead('latency', `${side}.latency`),
    sortHead('cost', `${side}.cost`),
  ];
  const search = h('input', {
    type: 'search',
    placeholder: 'search ids, inputs, outputs',
    'aria-label': 'search rows',
    'data-testid': 'search',
    value: state.q ?? '',
    oninput: (/** @type {Event} */ e) => set('q', /** @type {HTMLInputElement} */ (e.target).value.trim()),
  });
  paint();

  let panel = null;
  if (params.row) {
    const row = await api.row({ ...scope, row_id: params.row, versions: versions.join(',') });
    panel = row
      ? diffPanel(row, () => go('rows', state))
      : h('aside', { class: 'panel' }, h('p', { class: 'warn' }, `No row ${params.row} in this scope.`));
    if (!row) warnings.push(`No row "${params.row}" (row=) in ${scope.suite} · dataset ${scope.dataset_version}.`);
  }
  if (keyHandler) document.removeEventListener('keydown', keyHandler);
  keyHandler = (e) => {
    const target = /** @type {Element | null} */ (e.target);
    if (!location.hash.startsWith('#/rows') || target?.tagName === 'INPUT' || target?.tagName === 'SELECT') return;
    if (e.key === 'Escape' && params.row) return go('rows', state);
    const step = e.key === 'j' || e.key === 'ArrowDown' ? 1 : e.key === 'k' || e.key === 'ArrowUp' ? -1 : 0;
    if (!step || !params.row) return;
    e.preventDefault();
    const next = step > 0 ? page.row_at?.next : page.row_at?.prev;
    if (next) openRow(next);
  };
  document.addEventListener('keydown', keyHandler);

  return h(
    'div',
    { class: `explorer ${panel ? 'with-panel' : ''}` },
    warnings.map((w) => h('p', { class: 'warn', 'data-testid': 'param-warning' }, w)),
    card(
      `Rows · ${baseline} → ${candidate}`,
      h(
        'div',
        { class: 'controls filters' },
        search,
        select('from', `${baseline} class`, classOptions),
        select('to', `${candidate} class`, classOptions),
        select(
          'tag',
          'tag',
          tags.map((t) => /** @type {const} */ ([t, t])),
        ),
        select(
          'check',
          'flipping check',
          page.checks.map((c) => /** @type {const} */ ([c, c.replaceAll('_', ' ')])),
        ),
        select(
          'category',
          'failure',
          page.failure_categories.map((c) => /** @type {const} */ ([c, c.replaceAll('_', ' ')])),
        ),
        state.ids
          ? h(
              'span',
              { class: 'chip' },
              `only ${state.ids.split(',').length} listed rows`,
              ' ',
              h('button', { class: 'link', onclick: () => set('ids', '') }, 'clear'),
            )
          : null,
        countBox,
        pager,
        h(
          'button',
          {
            'data-testid': 'export-csv',
            onclick: async () =>
              download(
                `passk-rows-${scope.suite}-${scope.dataset_version}.csv`,
                'text/csv',
                toCsv(exportRecords(await keptRows(), versions)),
              ),
          },
          'CSV',
        ),
        h(
          'button',
          {
            'data-testid': 'export-json',
            onclick: async () =>
              download(
                `passk-rows-${scope.suite}-${scope.dataset_version}.json`,
                'application/json',
                JSON.stringify(exportRecords(await keptRows(), versions), null, 2) + '\n',
              ),
          },
          'JSON',
        ),
      ),
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'explorer-table', 'data-testid': 'explorer' },
          h(
            'thead',
            {},
            h(
              'tr',
              { class: 'group' },
              h('th', { colspan: 3 }, ''),
              h('th', { colspan: 6 }, `${baseline} (baseline)`),
              h('th', { colspan: 6 }, `${candidate} (candidate)`),
            ),
            h(
              'tr',
              {},
              sortHead('row', 'row'),
              h('th', {}, 'input'),
              h('th', {}, 'tags'),
              versionHeads('b'),
              versionHeads('c'),
            ),
          ),
          body,
        ),
      ),
    ),
    panel,
  );
};

/** A link into the explorer with these filters, for every count on every view. */
/** @param {State} params */
export const rowsLink = (params) =>
  `#/rows?${new URLSearchParams(/** @type {[string, string][]} */ (Object.entries(params).filter(([, v]) => v)))}`;
export { FILTERS };
