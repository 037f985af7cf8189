// @ts-check
/* global URLSearchParams */
import { api } from '../api.js';
import { windowsChart } from '../charts.js';
import { card, ci, command, empty, h, pct, table, time, usd } from '../dom.js';
/**
 * @import { Answer, ConfirmAnswer } from '../../contract.ts'
 * @import { Params, ViewContext } from '../view.d.ts'
 * @typedef {NonNullable<Answer<'/api/trace'>>} Trace
 * @typedef {Answer<'/api/traces'>} TraceList
 * @typedef {TraceList['traces'][number]} ListedTrace
 * @typedef {ViewContext['navigate']} Go
 */

/** The trace list's filters and sort, the trace open in its card, the window size and the grader. */
export const params = [
  'failed',
  'version',
  'segment',
  'from',
  'to',
  'user',
  'session',
  'model',
  'latency',
  'sort',
  'trace',
  'size',
  'grader',
  'offset',
];
export const title = 'Production';

/** The grader of the windows that hold the traces no grader judged (processors/folds/windows.ts). */
/**
 * A window's start and end in UTC (the column says so), short enough for a phone: the date, then the times
 * (`2026-01-01 07:00–08:00`), each part kept on one line; an end on another day names its date (a 24 h window
 * is not "07:00–07:00").
 * @param {number} start
 * @param {number} end
 */
const windowCell = (start, end) => {
  const s = new Date(start).toISOString();
  const e = new Date(end).toISOString();
  const until = e.slice(0, 10) === s.slice(0, 10) ? e.slice(11, 16) : `${e.slice(5, 10)} ${e.slice(11, 16)}`;
  return h(
    'td',
    { 'data-field': 'window', title: `${time(start)} → ${time(end)}` },
    h('span', { class: 'nowrap' }, s.slice(0, 10)),
    ' ',
    h('span', { class: 'nowrap' }, `${s.slice(11, 16)}–${until}`),
  );
};

const NONE = 'none';

/** @param {Trace['verdicts']} verdicts */
const verdictChips = (verdicts) =>
  verdicts.length === 0
    ? h('span', { class: 'note' }, 'not graded')
    : verdicts.map((v) =>
        h(
          'span',
          { class: `chip verdict-chip ${v.passed === null ? 'ungraded' : v.passed ? 'pass' : 'fail'}` },
          `${v.grader}: ${v.passed === null ? 'ungraded' : v.passed ? 'pass' : 'fail'}`,
        ),
      );

/** @param {string} w */
const WHY = (w) =>
  w.startsWith('grader:')
    ? `failed ${w.slice(7)}`
    : w.startsWith('error:')
      ? `error ${w.slice(6)}`
      : w === 'negative_feedback'
        ? 'negative feedback'
        : w;

/** @param {NonNullable<Trace['dataset_row']>} r */
const rowLink = (r) =>
  h(
    'a',
    {
      href: `#/datasets?${new URLSearchParams({ dataset: r.dataset_id, version: r.dataset_version, row: r.row_id })}`,
      'data-testid': 'dataset-row-link',
      'data-row': r.row_id,
      'data-version': r.dataset_version,
    },
    `must-not-break row ${r.row_id} in ${r.dataset_id} ${r.dataset_version}`,
  );

/** What the reviewer typed survives the live re-renders; the token stays in this tab (sessionStorage) only. */
/** @type {{ trace: string | null, dataset: string, expected: string, reviewer: string, note: string, anyAgent: boolean }} */
const draft = { trace: null, dataset: '', expected: '', reviewer: '', note: '', anyAgent: false };
/** @type {Map<string, ConfirmAnswer>} */
const answered = new Map();
const TOKEN_KEY = 'passk_write_token';

/** @param {Trace} t @param {readonly string[]} datasets @param {() => void} redraw */
const confirmForm = (t, datasets, redraw) => {
  if (draft.trace !== t.trace_id) Object.assign(draft, { trace: t.trace_id, expected: '', note: '', anyAgent: false });
  if (!draft.dataset || !datasets.includes(draft.dataset)) draft.dataset = datasets[0] ?? '';
  const status = h('p', { class: 'note', 'data-testid': 'confirm-status', role: 'status' });
  const done = answered.get(t.trace_id);
  if (done) {
    status.dataset.state = 'done';
    status.dataset.event = done.event_id;
    status.dataset.agentVersion = done.agent_version;
    status.replaceChildren(
      `Confirmed, recorded by agent version ${done.agent_version} (event ${done.event_id.slice(0, 12)}…${done.published ? '' : ', already in the log'}). `,
      'The processors add it to a new version of ',
      h('b', {}, done.dataset_id),
      ' as a must-not-break row; the link appears here once it is stored.',
      done.agent_check ? h('span', { class: 'warn', 'data-testid': 'agent-check' }, ` ${done.agent_check}.`) : '',
    );
  }
  /**
   * @param {string} label
   * @param {'dataset' | 'expected' | 'reviewer' | 'note'} name
   * @param {Record<string, unknown>} [attrs]
   */
  const field = (label, name, attrs = {}) =>
    h(
      'label',
      {},
      h('span', {}, label),
      h('input', {
        name,
        value: draft[name] ?? '',
        oninput: (/** @type {Event} */ e) => (draft[name] = /** @type {HTMLInputElement} */ (e.target).value),
        ...attrs,
      }),
    );
  const tokenInput = h('input', {
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    value: globalThis.sessionStorage?.getItem(TOKEN_KEY) ?? '',
    placeholder: 'the --ingest-token of passk serve',
  });
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault();
    // the form's one button, its submit button
    const button = /** @type {HTMLButtonElement} */ (/** @type {HTMLFormElement} */ (e.target).querySelector('button'));
    button.disabled = true;
    status.className = 'note';
    status.textContent = 'Publishing…';
    try {
      globalThis.sessionStorage?.setItem(TOKEN_KEY, tokenInput.value);
      const answer = await api.confirm(
        {
          trace_id: t.trace_id,
          dataset_id: draft.dataset,
          expected: draft.expected,
          reviewer: draft.reviewer,
          ...(draft.note ? { note: draft.note } : {}),
          ...(draft.anyAgent ? { any_agent: true } : {}),
        },
        tokenInput.value,
      );
      answered.set(t.trace_id, answer);
      redraw();
    } catch (err) {
      status.className = 'warn';
      status.dataset.state = 'error';
      status.textContent = `Not confirmed: ${err instanceof Error ? err.message : String(err)}`;
      button.disabled = false;
    }
  };
  return h(
    'form',
    { class: 'confirm', 'data-testid': 'confirm-form', onsubmit: submit },
    h('h3', {}, 'Confirm as a failure → must-not-break row'),
    h(
      'p',
      { class: 'note' },
      'Publishes the FailureConfirmed that passk review --confirm publishes: the processors add the input with your expected answer to a new dataset version, tagged must-not-break, linked to this trace.',
    ),
    h(
      'div',
      { class: 'fields' },
      datasets.length
        ? h(
            'label',
            {},
            h('span', {}, 'dataset'),
            h(
              'select',
              {
                name: 'dataset',
                onchange: (/** @type {Event} */ e) =>
                  (draft.dataset = /** @type {HTMLSelectElement} */ (e.target).value),
              },
              datasets.map((d) => h('option', { value: d, selected: d === draft.dataset }, d)),
            ),
          )
        : field('dataset', 'dataset', { required: true }),
      field('expected answer', 'expected', { required: true, placeholder: 'what it should have answered' }),
      field('reviewer', 'reviewer', { required: true, placeholder: 'your name' }),
      field('note', 'note', { placeholder: 'why (optional)' }),
      h('label', {}, h('span', {}, 'write token'), tokenInput),
    ),
    h(
      'label',
      { class: 'any-agent' },
      h('input', {
        type: 'checkbox',
        name: 'any_agent',
        checked: draft.anyAgent || undefined,
        onchange: (/** @type {Event} */ e) => (draft.anyAgent = /** @type {HTMLInputElement} */ (e.target).checked),
      }),
      h(
        'span',
        {},
        "confirm although it was recorded by another agent (a version with no trials on the dataset's suite: ",
        h('code', {}, '--any-agent'),
        ')',
      ),
    ),
    h('button', { type: 'submit', class: 'primary', disabled: done ? true : undefined }, 'Confirm failure'),
    status,
  );
};

/** A sampled trace: what was asked, what the live version answered, how it was graded, and its review. */
/**
 * @param {Trace | null} t
 * @param {string | undefined} id the trace= parameter
 * @param {readonly string[]} datasets
 * @param {() => void} redraw
 * @param {() => void} close
 */
const traceCard = (t, id, datasets, redraw, close) => {
  if (t === null)
    return card(
      `Trace ${id}`,
      empty('This trace is not stored (or no longer: raw traces expire after the trace TTL).'),
    );
  const signals = Object.entries(t.user_signals ?? {});
  return h(
    'section',
    { class: 'card trace-card', 'data-testid': 'trace', 'data-trace': t.trace_id },
    h(
      'div',
      { class: 'panel-head' },
      h('h2', {}, `Trace ${t.trace_id}`),
      h('button', { class: 'close', type: 'button', 'aria-label': 'close', onclick: close }, '×'),
    ),
    h(
      'dl',
      { class: 'trace-facts' },
      h('div', {}, h('dt', {}, 'when'), h('dd', {}, time(t.occurred_at))),
      h('div', {}, h('dt', {}, 'version · segment'), h('dd', {}, `${t.agent_version} · ${t.segment}`)),
      h(
        'div',
        {},
        h('dt', {}, 'sampled with probability'),
        h(
          'dd',
          { 'data-field': 'probability' },
          String(t.sampling_probability),
          h('span', { class: 'note' }, ` (weight ${(1 / t.sampling_probability).toFixed(1)})`),
        ),
      ),
      h('div', {}, h('dt', {}, 'verdicts'), h('dd', { 'data-field': 'verdicts' }, verdictChips(t.verdicts))),
      t.error_kind ? h('div', {}, h('dt', {}, 'error'), h('dd', {}, t.error_kind)) : null,
      fact('user', 'user', t.user_id),
      fact('session', 'session', t.session_id),
      fact('latency', 'latency', t.latency_ms == null ? null : `${Math.round(t.latency_ms).toLocaleString('en')} ms`),
      fact(
        'model',
        'model',
        t.model || t.response_model
          ? t.response_model && t.response_model !== t.model
            ? `${t.model ?? '?'} → ${t.response_model}`
            : (t.model ?? t.response_model)
          : null,
      ),
      fact(
        'tokens',
        'tokens (in / out)',
        // the store keeps both counts or neither (web/traceItem.ts)
        t.tokens_input == null || t.tokens_output == null
          ? null
          : `${t.tokens_input.toLocaleString('en')} / ${t.tokens_output.toLocaleString('en')}`,
      ),
      fact('cost', 'cost', t.cost_usd == null ? null : usd(t.cost_usd)),
      signals.length
        ? h(
            'div',
            {},
            h('dt', {}, 'user signals'),
            h('dd', { 'data-field': 'signals' }, signals.map(([k, v]) => `${k}: ${v}`).join(', ')),
          )
        : null,
    ),
    h('h3', {}, 'Input'),
    h('pre', { class: 'wrap', 'data-field': 'input' }, pretty(t.input)),
    h('h3', {}, 'Output'),
    h('pre', { class: 'wrap', 'data-field': 'output' }, pretty(t.output)),
    t.confirmation
      ? h(
          'div',
          {
            class: 'confirmation',
            'data-testid': 'confirmation',
            'data-reviewer': t.confirmation.reviewer,
            'data-event': t.confirmation.event_id,
          },
          h('h3', {}, 'Confirmed failure'),
          h(
            'p',
            {},
            `Confirmed by ${t.confirmation.reviewer} on ${time(t.confirmation.occurred_at)} for dataset ${t.confirmation.dataset_id}: expected `,
            h('b', {}, t.confirmation.expected),
            t.confirmation.note ? ` — “${t.confirmation.note}”` : '',
            '.',
          ),
          h(
            'p',
            {},
            t.dataset_row ? rowLink(t.dataset_row) : h('span', { class: 'note' }, 'Not yet in a dataset version.'),
          ),
          // what the confirm answered in this page (an agent version the check could not vouch for) stays said once the
          // processors have stored it: the form, which said it, is gone by then, often within a frame of the answer
          ((check) => (check ? h('p', { class: 'warn', 'data-testid': 'agent-check' }, `${check}.`) : ''))(
            answered.get(t.trace_id)?.agent_check,
          ),
        )
      : confirmForm(t, datasets, redraw),
  );
};

/** A JSON input pretty-printed, anything else as it is. */
/** @param {string | null | undefined} s */
const pretty = (s) => {
  if (s === null || s === undefined) return '—';
  try {
    const v = JSON.parse(s);
    return typeof v === 'object' && v !== null ? JSON.stringify(v, null, 2) : s;
  } catch {
    return s;
  }
};
/** What a reader recognizes a request by: its `message` when the input is JSON with one, else the text. */
/**
 * A message or one of its parts, as parsed JSON: any field may be missing or of another type.
 * @typedef {{ role?: unknown, content?: unknown, parts?: unknown, text?: unknown }} Message
 */
/** @param {unknown} m @returns {m is Message} */
const isObject = (m) => typeof m === 'object' && m !== null;
/** The text of a message list's last user turn, in the shapes the conventions use (`content`, or `parts`). */
/** @param {readonly unknown[]} messages @returns {string | null} */
const lastUserText = (messages) => {
  const user = messages.findLast((m) => isObject(m) && (m.role === 'user' || m.role === undefined));
  if (!isObject(user)) return null;
  if (typeof user.content === 'string') return user.content;
  /** @type {readonly unknown[]} */
  const parts = Array.isArray(user.parts) ? user.parts : Array.isArray(user.content) ? user.content : [];
  const text = parts
    .map((p) => (isObject(p) ? (p.content ?? p.text ?? '') : ''))
    .join(' ')
    .trim();
  return text || null;
};
/** @param {string | null | undefined} s */
const gist = (s) => {
  if (s === null || s === undefined) return null;
  try {
    const v = JSON.parse(s);
    if (typeof v?.message === 'string') return v.message;
    if (Array.isArray(v)) return lastUserText(v) ?? s;
    return s;
  } catch {
    return s;
  }
};
/** @param {string | null | undefined} s @param {number} [n] */
const excerpt = (s, n = 80) => (s === null || s === undefined ? '—' : s.length <= n ? s : `${s.slice(0, n - 1)}…`);
/** @typedef {(a: ListedTrace, b: ListedTrace) => number} Order */
const SORTS = {
  /** @type {Order} */
  newest: (a, b) => b.occurred_at - a.occurred_at,
  /** @type {Order} */
  oldest: (a, b) => a.occurred_at - b.occurred_at,
  /** @type {Order} */
  weight: (a, b) => a.sampling_probability - b.sampling_probability || b.occurred_at - a.occurred_at,
};
/** @param {string | undefined} s @returns {s is keyof typeof SORTS} */
const isSort = (s) => s !== undefined && s in SORTS;
/** `YYYY-MM-DDTHH:MM`, read as UTC (the page shows every time in UTC). */
/** @param {number} ms */
const utcInput = (ms) => (ms ? new Date(ms).toISOString().slice(0, 16) : '');
/** @param {string} v the milliseconds as the URL carries them */
const fromUtcInput = (v) => (v ? String(Date.parse(`${v}:00Z`)) : undefined);

/** One fact of the trace card, left out when the trace does not carry it. */
/** @param {string} field @param {string} label @param {string | number | null | undefined} value */
const fact = (field, label, value) =>
  value == null || value === ''
    ? null
    : h('div', {}, h('dt', {}, label), h('dd', { 'data-field': field }, String(value)));

/**
 * The sampled-trace list: filters in the URL (failed, version, segment, time, user, session, model, least latency),
 * sortable, each line opens its card.
 */
/** @param {TraceList} list @param {Params} params @param {Go} go */
const traceList = (list, params, go) => {
  const failed = params.failed !== 'all';
  const sort = isSort(params.sort) ? params.sort : 'newest';
  const rows = [...list.traces].sort(SORTS[sort]);
  // a filter starts the list again from its first page
  /** @param {Record<string, string | undefined>} p */
  const set = (p) => go({ ...params, offset: undefined, ...p });
  /** @param {number} offset */
  const turn = (offset) => go({ ...params, offset: offset > 0 ? String(offset) : undefined });
  const last = list.offset + list.traces.length;
  /**
   * @param {string} name
   * @param {string} label
   * @param {readonly (readonly [string, string])[]} options each value and its text
   * @param {string | undefined} value
   */
  const select = (name, label, options, value) =>
    h(
      'label',
      {},
      h('span', {}, label),
      h(
        'select',
        {
          'data-filter': name,
          onchange: (/** @type {Event} */ e) =>
            set({ [name]: /** @type {HTMLSelectElement} */ (e.target).value || undefined }),
        },
        options.map(([v, text]) => h('option', { value: v, selected: v === (value ?? '') }, text)),
      ),
    );
  /** @param {'from' | 'to'} name @param {string} label */
  const timeFilter = (name, label) =>
    h(
      'label',
      {},
      h('span', {}, `${label} (UTC)`),
      h('input', {
        type: 'datetime-local',
        'data-filter': name,
        value: utcInput(Number(params[name]) || 0),
        onchange: (/** @type {Event} */ e) =>
          set({ [name]: fromUtcInput(/** @type {HTMLInputElement} */ (e.target).value) }),
      }),
    );
  /** @param {string} name @param {string} label */
  const textFilter = (name, label) =>
    h(
      'label',
      {},
      h('span', {}, label),
      h('input', {
        type: 'text',
        size: 12,
        'data-filter': name,
        value: params[name] ?? '',
        onchange: (/** @type {Event} */ e) =>
          set({ [name]: /** @type {HTMLInputElement} */ (e.target).value.trim() || undefined }),
      }),
    );
  return card(
    list.total > list.traces.length
      ? `Sampled traces (${list.offset + 1}–${last} of ${list.total})`
      : `Sampled traces (${list.total})`,
    h(
      'div',
      { class: 'controls filters' },
      select(
        'failed',
        'show',
        [
          ['', 'failures to review'],
          ['all', 'every sampled trace'],
        ],
        failed ? '' : 'all',
      ),
      select(
        'version',
        'version',
        [['', 'any'], ...list.agent_versions.map((v) => /** @type {const} */ ([v, v]))],
        params.version,
      ),
      select(
        'segment',
        'segment',
        [['', 'any'], ...list.segments.map((v) => /** @type {const} */ ([v, v]))],
        params.segment,
      ),
      timeFilter('from', 'from'),
      timeFilter('to', 'until'),
      textFilter('user', 'user'),
      textFilter('session', 'session'),
      textFilter('model', 'model'),
      textFilter('latency', 'latency ≥ (ms)'),
      select(
        'sort',
        'sort',
        [
          ['newest', 'newest first'],
          ['oldest', 'oldest first'],
          ['weight', 'heaviest weight first'],
        ],
        sort,
      ),
    ),
    list.total > list.traces.length
      ? h(
          'div',
          { class: 'pager', 'data-testid': 'traces-pager' },
          h('button', { disabled: list.offset === 0, onclick: () => turn(Math.max(0, list.offset - 200)) }, '‹'),
          ` traces ${list.offset + 1}–${last} of ${list.total} `,
          h('button', { disabled: last >= list.total, onclick: () => turn(last) }, '›'),
        )
      : null,
    rows.length === 0
      ? empty(
          failed
            ? 'No sampled trace failed a grader, ended in an error or got negative feedback.'
            : 'No sampled traces.',
        )
      : h(
          'div',
          { class: 'scroll trace-scroll' },
          table(
            ['time (UTC)', 'version · segment', 'why', 'input', 'output', 'review'],
            rows.map((t) =>
              h(
                'tr',
                {
                  class: `clickable${t.trace_id === params.trace ? ' selected' : ''}`,
                  'data-trace': t.trace_id,
                  'data-failed': String(t.why.length > 0),
                  'data-confirmed': String(t.confirmation !== null),
                  tabindex: 0,
                  onclick: () => go({ ...params, trace: t.trace_id }),
                  onkeydown: (/** @type {KeyboardEvent} */ e) =>
                    e.key === 'Enter' && go({ ...params, trace: t.trace_id }),
                },
                h('td', { class: 'nowrap', title: time(t.occurred_at) }, time(t.occurred_at).slice(5, 16)),
                h('td', {}, `${t.agent_version} · ${t.segment}`),
                h('td', {}, t.why.length ? t.why.map(WHY).join(', ') : h('span', { class: 'note' }, 'passed')),
                h('td', { class: 'text', title: gist(t.input) ?? '' }, excerpt(gist(t.input), 90)),
                h('td', { class: 'text out' }, excerpt(t.output, 40)),
                h(
                  'td',
                  {},
                  t.dataset_row
                    ? h('span', { class: 'chip mnb' }, `→ ${t.dataset_row.row_id}`)
                    : t.confirmation
                      ? h('span', { class: 'chip' }, 'confirmed')
                      : '',
                ),
              ),
            ),
            { class: 'traces-table', 'data-testid': 'traces' },
            { scroll: false },
          ),
        ),
  );
};

/** @param {ViewContext} ctx */
export const render = async ({ params, navigate, redraw, warn }) => {
  const query = {
    ...(params.failed === 'all' ? {} : { failed: /** @type {const} */ ('true') }),
    agent_version: params.version,
    segment: params.segment,
    from: params.from,
    to: params.to,
    user_id: params.user,
    session_id: params.session,
    model: params.model,
    min_latency_ms: params.latency,
    offset: params.offset,
  };
  const [prod, trace, list] = await Promise.all([
    api.production(),
    params.trace ? api.trace(params.trace) : undefined,
    api.traces(query),
  ]);
  if (params.trace && trace === null)
    warn(`No trace "${params.trace}" (trace=) is stored (or no longer: raw traces expire after the trace TTL).`);
  for (const [key, values] of /** @type {[string, string[]][]} */ ([
    ['version', list.agent_versions],
    ['segment', list.segments],
  ]))
    if (params[key] && !values.includes(params[key]))
      warn(`No sampled trace of ${key} "${params[key]}" (${key}=); the list shows none.`);
  /** @type {Go} */
  const go = (p) => navigate(p);
  const close = () => go({ ...params, trace: undefined });
  const review = h(
    'div',
    { class: `review${trace === undefined ? '' : ' with-card'}` },
    traceList(list, params, go),
    trace === undefined ? null : traceCard(trace, params.trace, list.datasets, redraw, close),
  );
  if (prod.windows.length === 0 && prod.alerts.length === 0 && list.agent_versions.length === 0)
    return card(
      'No production traffic yet',
      empty(
        'Sample production traces',
        command((await api.commands()).sample),
        'or with the SDK middleware; they appear here in rolling windows per version and segment.',
      ),
    );
  const sizes = [...new Set(prod.windows.map((w) => w.size))];
  const size = params.size && sizes.includes(params.size) ? params.size : sizes[0];
  if (params.size && size !== params.size)
    warn(
      sizes.length
        ? `No ${params.size} windows (size=); showing ${size} (windows of ${sizes.join(', ')}).`
        : `No ${params.size} windows (size=): no window is stored yet.`,
    );
  const ofSize = prod.windows.filter((w) => w.size === size);
  // One grader at a time: two graders' verdicts on the same traces are two pass rates, never one line. `none` holds
  // the traces no grader judged: it has no rate, so it is offered only when nothing was graded.
  const graders = [...new Set(ofSize.map((w) => w.grader))].sort();
  const rated = graders.filter((g) => g !== NONE);
  const choices = rated.length > 0 ? rated : graders;
  const grader = params.grader && choices.includes(params.grader) ? params.grader : choices[0];
  if (params.grader && grader !== params.grader)
    warn(
      choices.length
        ? `No ${params.grader} verdicts in ${size} windows (grader=); showing ${grader} (graders: ${choices.join(', ')}).`
        : `No ${params.grader} verdicts (grader=): no window is stored yet.`,
    );
  const shown = ofSize.filter((w) => w.grader === grader);
  const unjudged =
    grader === NONE ? 0 : ofSize.filter((w) => w.grader === NONE).reduce((n, w) => n + (w.traces ?? 0), 0);
  const keys = [...new Set(shown.map((w) => `${w.agent_version} · ${w.segment}`))].sort();
  const lines = keys.map((name) => ({
    name,
    points: shown
      .filter((w) => `${w.agent_version} · ${w.segment}` === name && w.pass_rate !== null)
      .map((w) => ({ t: w.end, value: w.pass_rate, lo: w.interval?.[0] ?? null, hi: w.interval?.[1] ?? null })),
  }));
  /** @param {Record<string, string | undefined>} change */
  const linkTo = (change) =>
    `#/production?${new URLSearchParams(
      /** @type {Record<string, string>} */ (
        Object.fromEntries(Object.entries({ size, grader, ...change }).filter(([, v]) => v !== undefined))
      ),
    )}`;
  const latest = [...shown].sort((a, b) => b.end - a.end).slice(0, 12);
  return h(
    'div',
    { class: 'production' },
    review,
    card(
      size
        ? `Sampling-weighted pass rate by ${grader === NONE ? 'no grader' : grader}, ${size} windows`
        : 'Sampling-weighted pass rate (no window yet)',
      h(
        'p',
        { class: 'note' },
        'Each trace is weighted by 1 / its sampling probability (Horvitz–Thompson); bands are 95% intervals.',
      ),
      sizes.length > 1
        ? h(
            'p',
            {},
            sizes.map((s) =>
              h('a', { href: linkTo({ size: s, grader: undefined }), class: s === size ? 'active pill' : 'pill' }, s),
            ),
          )
        : null,
      h(
        'p',
        { 'data-testid': 'graders', 'data-grader': grader },
        'grader: ',
        choices.map((g) =>
          h(
            'a',
            { href: linkTo({ grader: g }), class: g === grader ? 'active pill' : 'pill', 'data-grader': g },
            g === NONE ? 'no grader' : g,
          ),
        ),
      ),
      unjudged > 0
        ? h(
            'p',
            { class: 'note', 'data-testid': 'unjudged', 'data-traces': unjudged },
            `${unjudged} sampled ${unjudged === 1 ? 'trace' : 'traces'} of these windows had no grader's verdict: counted by no rate here.`,
          )
        : null,
      windowsChart(lines),
      h(
        'p',
        { class: 'note' },
        'Sampled counts every trace of the window, graded those with a verdict; a window with none has no pass rate (not 0). Late traces arrived after their window closed: they are stored, and counted here, not in the rate. Unknown: a window an older passk stored with the graded count as sampled, which could not be corrected.',
      ),
      table(
        ['window (UTC)', 'version', 'segment', 'sampled', 'graded', 'pass rate', '95% interval', 'late'],
        latest.map((w) =>
          h(
            'tr',
            {
              'data-version': w.agent_version,
              'data-segment': w.segment,
              'data-grader': w.grader,
              'data-start': w.start,
              'data-end': w.end,
              'data-pass-rate': w.pass_rate ?? '',
              'data-sampled': w.traces ?? '',
              'data-graded': w.graded ?? '',
              'data-late': w.late ?? '',
            },
            windowCell(w.start, w.end),
            h('td', {}, w.agent_version),
            h('td', {}, w.segment),
            h('td', { 'data-field': 'sampled' }, w.traces === null ? 'unknown' : String(w.traces)),
            h('td', { 'data-field': 'graded' }, w.graded === null ? 'unknown' : String(w.graded)),
            h(
              'td',
              { 'data-field': 'pass-rate', class: w.pass_rate === null ? 'dim' : '' },
              w.pass_rate === null ? 'not graded' : pct(w.pass_rate),
            ),
            h('td', {}, ci(w.interval)),
            h('td', { 'data-field': 'late' }, w.late === null ? '—' : String(w.late)),
          ),
        ),
        { 'data-testid': 'windows' },
      ),
    ),
    h(
      'div',
      { class: 'cards two' },
      card(
        `Alerts (${prod.alerts.length})`,
        prod.alerts.length === 0
          ? empty('No window fell significantly below the offline pass@1.')
          : h(
              'ul',
              { class: 'alerts', 'data-testid': 'alerts' },
              prod.alerts.map((a) =>
                h(
                  'li',
                  {
                    class: `alert ${a.severity}`,
                    'data-kind': a.kind,
                    'data-alert': a.alert_id,
                    'data-version': a.agent_version,
                    'data-segment': a.segment,
                  },
                  h('b', {}, `${a.agent_version} · ${a.segment}`),
                  ` ${time(a.window_start ?? a.raised_at)}: `,
                  a.value !== null ? `pass rate ${pct(a.value)}` : '',
                  a.threshold !== null ? ` vs offline pass@1 ${pct(a.threshold)}` : '',
                  h('div', { class: 'note' }, a.message),
                ),
              ),
            ),
      ),
      card(
        `Flips on repeated inputs (${prod.repeated_input_flips.length})`,
        h(
          'p',
          { class: 'note' },
          'The same request (same input fingerprint) got different verdicts: if asking again can change the answer, people learn to ask again.',
        ),
        prod.repeated_input_flips.length === 0
          ? empty('none')
          : table(
              ['input', 'version', 'traces', 'verdicts', 'traces behind it'],
              prod.repeated_input_flips.map((f) =>
                h(
                  'tr',
                  {
                    class: params.trace && f.trace_ids.includes(params.trace) ? 'highlight' : '',
                    'data-fingerprint': f.input_fingerprint,
                    'data-traces': f.traces,
                  },
                  h('td', { title: f.input_fingerprint }, f.input_fingerprint.slice(0, 12)),
                  h('td', {}, f.agent_version),
                  h('td', {}, String(f.traces)),
                  h(
                    'td',
                    {},
                    Object.entries(f.verdicts)
                      .map(([k, v]) => `${k} ×${v}`)
                      .join(', '),
                  ),
                  h(
                    'td',
                    { class: 'links' },
                    f.trace_ids.map((id) =>
                      h(
                        'a',
                        {
                          href: '#',
                          'data-trace': id,
                          onclick: (/** @type {Event} */ e) => (e.preventDefault(), go({ ...params, trace: id })),
                        },
                        id,
                      ),
                    ),
                  ),
                ),
              ),
              { 'data-testid': 'repeated-flips' },
            ),
      ),
    ),
  );
};
