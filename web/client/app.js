// @ts-check
/* global document, window, location, history, EventSource, URLSearchParams, Element */
import { api } from './api.js';
import { destroyCharts, drawCharts } from './charts.js';
import { h, isScrollBox, markScroll, markScrolls } from './dom.js';
import * as compare from './views/compare.js';
import * as datasets from './views/datasets.js';
import * as deadletters from './views/deadLetters.js';
import * as gates from './views/gates.js';
import * as judges from './views/judges.js';
import * as overview from './views/overview.js';
import * as production from './views/production.js';
import * as rows from './views/rows.js';

/**
 * The dashboard shell: a hash router (#/view?params), the suite / dataset-version scope, and live updates.
 * Each view module exports `title` and `render(ctx)`, which returns one element. When the server says the
 * store moved (SSE `update`), the current view is fetched and drawn again, in place, without a reload.
 */
/**
 * @import { Answer, Status } from '../contract.ts'
 * @import { NavigateOptions, Scope, ViewModule } from './view.d.ts'
 * @type {Record<string, ViewModule>}
 */
const VIEWS = { overview, compare, rows, gates, production, judges, datasets, deadletters };
/** Parameters every view takes: the scope. A view names its own in `params`; any other is named in a warning. */
const SCOPE_PARAMS = ['suite', 'dataset_version'];
/** An element index.html has. @param {string} id @returns {HTMLElement} */
const byId = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no #${id}`);
  return el;
};
const view = byId('view');
const nav = byId('nav');
const scopeBox = byId('scope');
const liveBox = byId('live');

const parseHash = () => {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const name = path in VIEWS ? path : 'overview';
  return { name, params: Object.fromEntries(new URLSearchParams(query)) };
};

/**
 * Changes the route; `keep` keeps the current params and overrides some.
 * @param {string} name
 * @param {Record<string, string | undefined>} [params]
 * @param {NavigateOptions} [opts]
 */
export const navigate = (name, params = {}, { keep = false } = {}) => {
  const current = parseHash();
  const merged = keep ? { ...current.params, ...params } : params;
  const clean = /** @type {Record<string, string>} */ (
    Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined && v !== null && v !== ''))
  );
  const qs = new URLSearchParams(clean).toString();
  location.hash = `#/${name}${qs ? `?${qs}` : ''}`;
};

/** @param {Answer<'/api/groups'>} groups @returns {Scope[]} */
const scopesOf = (groups) => {
  /** @type {Map<string, Scope>} */
  const byKey = new Map();
  for (const g of groups) {
    const key = `${g.suite}\u001f${g.dataset_version}`;
    const s = byKey.get(key) ?? { suite: g.suite, dataset_version: g.dataset_version, last_at: 0, versions: [] };
    s.versions.push(g.agent_version);
    s.last_at = Math.max(s.last_at, g.last_at ?? 0);
    byKey.set(key, s);
  }
  return [...byKey.values()].sort((a, b) => b.last_at - a.last_at);
};

/** @param {string} name @param {Record<string, string | undefined>} params */
const renderNav = (name, params) => {
  const keep = { suite: params.suite, dataset_version: params.dataset_version };
  nav.replaceChildren(
    ...Object.entries(VIEWS).map(([key, v]) =>
      h(
        'a',
        {
          href: '#',
          class: key === name ? 'active' : '',
          'data-view': key,
          onclick: (/** @type {Event} */ e) => (e.preventDefault(), navigate(key, keep)),
        },
        v.title,
      ),
    ),
  );
};

/** @param {Scope} s */
const scopeName = (s) => `${s.suite} · dataset ${s.dataset_version}`;

/** @param {readonly Scope[]} scopes @param {Scope | null} scope @param {string} name */
const renderScope = (scopes, scope, name) => {
  if (scopes.length === 0) return scopeBox.replaceChildren();
  const select = h(
    'select',
    {
      'aria-label': 'suite and dataset version',
      'data-testid': 'scope',
      onchange: (/** @type {Event} */ e) => {
        const s = scopes[Number(/** @type {HTMLSelectElement} */ (e.target).value)];
        if (s) navigate(name, { suite: s.suite, dataset_version: s.dataset_version });
      },
    },
    scopes.map((s, i) =>
      h(
        'option',
        {
          value: i,
          selected: s.suite === scope?.suite && s.dataset_version === scope?.dataset_version,
          title: scopeName(s),
        },
        scopeName(s),
      ),
    ),
  );
  // a long name is cut with an ellipsis to fit the header: the whole of it on hover
  select.title = select.selectedOptions[0]?.textContent ?? '';
  scopeBox.replaceChildren(select);
};

let renders = 0;
/** @type {Promise<void> | null} */
let running = null;
let again = false;

/** What failed, said plainly, with the navigation kept above it; the live dot turns red until a render succeeds. */
/** @param {string} what @param {unknown} e */
const errorBanner = (what, e) =>
  h(
    'section',
    { class: 'card banner error', 'data-testid': 'error-banner', role: 'alert' },
    h('h2', {}, `Could not load ${what}`),
    h('pre', {}, String(e instanceof Error ? e.message : e)),
    h(
      'p',
      { class: 'note' },
      'The store did not answer this query. The page retries on the next update; ',
      h('a', { href: location.hash || '#/', onclick: () => void render() }, 'retry now'),
      '.',
    ),
  );
let failed = false;
/** Set when the server says the processors stopped: the numbers on the page no longer move. */
/** @type {string | null} */
let stopped = null;
const setLive = () => {
  if (stopped) {
    liveBox.textContent = `● processors stopped: ${stopped}`;
    liveBox.className = 'live error';
    liveBox.dataset.state = 'failed';
    liveBox.title = `The processors that fill the store stopped; what this page shows is no longer updated. ${stopped}`;
  } else if (failed) {
    liveBox.textContent = '● error';
    liveBox.className = 'live error';
    liveBox.dataset.state = 'error';
  } else if (liveBox.dataset.state === 'error') {
    liveBox.textContent = '● live';
    liveBox.className = 'live on';
    liveBox.dataset.state = 'on';
  }
};

const renderOnce = async () => {
  const route = location.hash;
  const raw = location.hash.replace(/^#\/?/, '').split('?')[0];
  const { name, params } = parseHash();
  renderNav(name, params); // before any query: the navigation stays whatever fails
  document.body.dataset.loading = 'true';
  const warnings = [];
  if (raw && !(raw in VIEWS)) warnings.push(`There is no view "${raw}"; showing the overview.`);
  const takes = [...SCOPE_PARAMS, ...(VIEWS[name].params ?? [])];
  const unknown = Object.keys(params).filter((p) => !takes.includes(p));
  if (unknown.length)
    warnings.push(
      `Unknown parameter${unknown.length === 1 ? '' : 's'} ${unknown.map((p) => `${p}=`).join(', ')} (ignored): the ${VIEWS[name].title} view takes ${takes.join(', ')}.`,
    );
  // the view's first question for the scope the URL names travels with the list of suites and versions, not after it
  if (params.suite && params.dataset_version) VIEWS[name].prefetch?.(params);
  let content;
  try {
    const groups = await api.groups();
    const scopes = scopesOf(groups);
    const named = scopes.find((s) => s.suite === params.suite && s.dataset_version === params.dataset_version);
    if ((params.suite || params.dataset_version) && !named && scopes.length)
      warnings.push(
        `No trials for suite "${params.suite ?? ''}", dataset version "${params.dataset_version ?? ''}"; showing ${scopes[0].suite} · ${scopes[0].dataset_version}.`,
      );
    // a view may open on a scope of its own when the URL names none (the Gates view: the latest gate's)
    const preferred = !named && VIEWS[name].scopeOf ? await VIEWS[name].scopeOf(scopes) : undefined;
    const scope = named ?? preferred ?? scopes[0] ?? null;
    renderScope(scopes, scope, name);
    try {
      content = await VIEWS[name].render({
        params,
        scope,
        scopes,
        groups,
        navigate: (p, o) => navigate(name, p, o),
        go: navigate,
        redraw: () => void render(),
        /** Names a parameter whose value the view could not use (an unknown version, row, gate or trace). */
        warn: (text) => warnings.push(text),
      });
      failed = false;
    } catch (e) {
      failed = true;
      content = errorBanner(`the ${VIEWS[name].title} view`, e);
    }
  } catch (e) {
    failed = true;
    content = errorBanner('the list of suites and versions', e);
  }
  setLive();
  destroyCharts();
  const scrollY = window.scrollY; // opening or closing a side panel keeps the list where it was
  view.replaceChildren(...warnings.map((w) => h('p', { class: 'warn', 'data-testid': 'param-warning' }, w)), content);
  window.scrollTo(0, scrollY);
  drawCharts();
  markScrolls(view);
  api.dropAhead();
  document.body.dataset.loading = 'false';
  document.title = `passk — ${VIEWS[name].title}`;
  document.body.dataset.view = name;
  document.body.dataset.route = route; // the hash this render drew (tests wait for it)
  document.body.dataset.renders = String(++renders);
};

/** Renders now, or once more after the render in progress (updates can arrive faster than renders). */
const render = () => {
  if (running) {
    again = true;
    return running;
  }
  running = renderOnce()
    .catch((e) => {
      failed = true;
      setLive();
      document.body.dataset.loading = 'false';
      view.replaceChildren(errorBanner('this page', e));
    })
    .finally(() => {
      running = null;
      if (again) {
        again = false;
        void render();
      }
    });
  return running;
};

const connect = () => {
  const source = new EventSource('/api/events');
  let updates = 0;
  /** @param {Status | undefined} status */
  const onStatus = (status) => {
    stopped = status?.state === 'failed' ? status.message : null;
    setLive();
  };
  source.addEventListener('hello', (e) => {
    liveBox.textContent = '● live';
    liveBox.className = 'live on';
    liveBox.dataset.state = 'on';
    onStatus(JSON.parse(e.data).status);
  });
  source.addEventListener('status', (e) => onStatus(JSON.parse(e.data)));
  source.addEventListener('update', () => {
    document.body.dataset.updates = String(++updates);
    // UTC with its zone, as every other time on the dashboard (a local time among UTC ones read as a mistake)
    if (!failed && !stopped) liveBox.textContent = `● live · updated ${new Date().toISOString().slice(11, 19)} UTC`;
    void render();
  });
  source.onerror = () => {
    if (stopped) return; // the server is going away because the processors stopped: keep saying why
    liveBox.textContent = '○ reconnecting…';
    liveBox.className = 'live off';
    liveBox.dataset.state = 'off';
  };
};

window.addEventListener('hashchange', () => void render());
// a box scrolled says again which of its sides hide some of it (scroll events do not bubble: captured here)
document.addEventListener(
  'scroll',
  (e) => {
    if (e.target instanceof Element && isScrollBox(e.target)) markScroll(e.target);
  },
  { capture: true, passive: true },
);
/** @type {ReturnType<typeof setTimeout> | undefined} */
let resizing;
window.addEventListener('resize', () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => void render(), 250);
});
/**
 * The first screen is the decision: opened without a route, the page goes to the comparison of the latest gate
 * verdict (its banner, the three numbers with their Δ, the regressed rows first). No gate yet: the overview.
 */
const land = async () => {
  if (location.hash.replace(/^#\/?/, '') !== '') return;
  const [latest] = await api.gates().catch(() => []);
  if (!latest) return;
  const q = new URLSearchParams({
    suite: latest.suite,
    dataset_version: latest.dataset_version,
    baseline: latest.baseline,
    candidate: latest.candidate,
  });
  history.replaceState(null, '', `#/compare?${q}`);
};

connect();
void land().finally(() => void render());
