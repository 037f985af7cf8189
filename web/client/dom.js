// @ts-check
/* global document, Node, ResizeObserver */
/**
 * A tiny DOM builder: every text goes through text nodes, never innerHTML, so row inputs and outputs
 * (which are user data) cannot inject markup.
 */
/**
 * @import { Child } from './view.d.ts'
 */
/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style' && typeof v === 'object')
      for (const [prop, value] of Object.entries(/** @type {Record<string, string>} */ (v))) {
        if (prop.startsWith('--')) el.style.setProperty(prop, value);
        else /** @type {Record<string, string>} */ (/** @type {unknown} */ (el.style))[prop] = value;
      }
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of /** @type {unknown[]} */ (children).flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
};

/** @param {number | null | undefined} x @param {number} [digits] */
export const pct = (x, digits = 1) =>
  x === null || x === undefined || Number.isNaN(x) ? '—' : `${(100 * x).toFixed(digits)}%`;
/** @param {number | null | undefined} x @param {number} [digits] */
export const signedPct = (x, digits = 1) =>
  x === null || x === undefined ? '—' : `${x >= 0 ? '+' : '−'}${(100 * Math.abs(x)).toFixed(digits)} pts`;
/**
 * Dollars with their significant digits, as the CLI prints them (cli/format/numbers.ts): cents from $1 up, else two
 * significant digits ($0.00033, $0.062), $0 for nothing spent, `—` unknown; never $0.0 nor $0.0000 for a small cost.
 * @param {number | null | undefined} x
 */
export const usd = (x) =>
  x === null || x === undefined || !Number.isFinite(x)
    ? '—'
    : x === 0
      ? '$0'
      : x >= 1
        ? `$${x.toFixed(2)}`
        : `$${x
            .toPrecision(2)
            .replace(/(\.\d*?)0+$/, '$1')
            .replace(/\.$/, '')}`;
/**
 * @param {readonly [number, number] | null | undefined} iv
 * @param {(x: number) => string} [fmt]
 */
export const ci = (iv, fmt = pct) => (iv ? `[${fmt(iv[0])}, ${fmt(iv[1])}]` : '');
/** @param {number | null | undefined} ms */
export const time = (ms) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');
/** @type {Record<string, string>} */
const CLASS_NAMES = {
  stable_correct: 'stable-correct',
  stable_wrong: 'stable-wrong',
  flip: 'flip',
  unclassified: 'unclassified',
};
/** @param {string} c */
export const className = (c) => CLASS_NAMES[c] ?? c;

/**
 * Marks a box that scrolls sideways with the sides where some of it is hidden (`data-more`: `left`, `right` or
 * `both`; none when it all shows), and the style draws a shadow on those edges. At 390 px a wide table is cut at the
 * card's edge, and without the shadow nothing says more columns are there.
 * @param {Element} box
 */
export const markScroll = (box) => {
  const el = /** @type {HTMLElement} */ (box);
  if (el.classList.contains('scroll-y')) markScrollY(el);
  if (!el.classList.contains('scroll')) return;
  const left = el.scrollLeft > 1;
  const right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
  const more = left && right ? 'both' : left ? 'left' : right ? 'right' : '';
  if (more) el.dataset.more = more;
  else delete el.dataset.more;
};
/**
 * The same for a box that scrolls up and down (`scroll-y`: Compare's lists of rows, 420 px high), on `data-more-y`:
 * `top`, `bottom` or `both`. A list cut at a row's edge looked whole: 13 of 25 rows shown, and nothing said so.
 * @param {HTMLElement} el
 */
const markScrollY = (el) => {
  const top = el.scrollTop > 1;
  const bottom = el.scrollTop + el.clientHeight < el.scrollHeight - 1;
  const more = top && bottom ? 'both' : top ? 'top' : bottom ? 'bottom' : '';
  if (more) el.dataset.moreY = more;
  else delete el.dataset.moreY;
};
/** @param {Element} el a box that scrolls, sideways (`scroll`) or up and down (`scroll-y`) */
export const isScrollBox = (el) => el.classList.contains('scroll') || el.classList.contains('scroll-y');
/**
 * Boxes and their tables are watched for size changes (a chart drawn, a column filled in later): marked again. Made
 * at the first render, not on import (Node imports this module for its formatters, and has no ResizeObserver).
 * @type {ResizeObserver | undefined}
 */
let resized;
/** Marks every scrolling box under `root`, and watches them (and no box of an earlier render) for size. */
/** @param {ParentNode} root */
export const markScrolls = (root) => {
  resized ??= new ResizeObserver((entries) => {
    for (const e of entries) {
      const box = isScrollBox(e.target) ? e.target : e.target.parentElement;
      if (box) markScroll(box);
    }
  });
  resized.disconnect();
  for (const box of root.querySelectorAll('.scroll, .scroll-y')) {
    markScroll(box);
    resized.observe(box);
    if (box.firstElementChild) resized.observe(box.firstElementChild);
  }
};

/**
 * A table in a box of its own that scrolls sideways when the table is wider than the screen (390 px): the table
 * scrolls, not the card around it, nor the page. `scroll: false` for a table already inside a scrolling box.
 * @param {readonly Child[]} head
 * @param {Child} rows
 * @param {Record<string, unknown>} [attrs]
 * @param {{ scroll?: boolean }} [opts]
 */
export const table = (head, rows, attrs = {}, { scroll = true } = {}) => {
  const t = h(
    'table',
    attrs,
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((x) => h('th', {}, x)),
      ),
    ),
    h('tbody', {}, rows),
  );
  return scroll ? h('div', { class: 'scroll table-box' }, t) : t;
};

/** @param {Child} title @param {...Child} body */
export const card = (title, ...body) => h('section', { class: 'card' }, title ? h('h2', {}, title) : null, ...body);

/** @param {...Child} parts */
export const empty = (...parts) => h('p', { class: 'empty' }, ...parts);

/**
 * A command to run, as the server made it (`api.commands()`, `confirm_commands`: the CLI's formatter), on a line of
 * its own, selected whole by a click.
 * @param {string} text
 */
export const command = (text) => h('code', { class: 'command', 'data-testid': 'suggested-command' }, text);
