// @ts-check
/* global getComputedStyle, document */
import uPlot from '/vendor/uPlot.esm.js';
import { h } from './dom.js';

/**
 * Charts drawn by uPlot (served from node_modules). Each chart function returns a placeholder element;
 * `drawCharts()` draws every pending chart once the view is in the document (so each can size itself),
 * and `destroyCharts()` frees the drawn ones before the view is replaced.
 */
/**
 * @typedef {(number | null)[]} Column
 * @typedef {{ opts: Omit<uPlot.Options, 'width' | 'height'>, data: Column[], helpers?: number[] }} Built
 * @typedef {{ box: HTMLElement, build: () => Built, height: number }} Pending
 * @typedef {{ data: Column[], series: uPlot.Series[], bands: uPlot.Band[], helpers: number[] }} Parts
 */
/** @type {Set<uPlot>} */
const live = new Set();
/** @type {Pending[]} */
let pending = [];
export const destroyCharts = () => {
  for (const c of live) c.destroy();
  live.clear();
};
export const drawCharts = () => {
  const todo = pending;
  pending = [];
  for (const { box, build, height } of todo) {
    if (!box.isConnected) continue;
    const { opts, data, helpers = [] } = build();
    const aligned = /** @type {uPlot.AlignedData} */ (/** @type {unknown} */ (data));
    // the x range drawn, for tests (the axis labels are on the canvas)
    /** @type {uPlot.Hooks.Defs['setScale']} */
    const setScale = (u, key) => {
      if (key === 'x') box.dataset.xRange = `${u.scales.x?.min ?? ''},${u.scales.x?.max ?? ''}`;
    };
    const hooks = { ...opts.hooks, setScale: [...(opts.hooks?.setScale ?? []), setScale] };
    const chart = new uPlot({ width: widthOf(box), height, ...opts, hooks }, aligned, box);
    // Band edges are series of their own; keep them out of the legend.
    const rows = chart.root.querySelectorAll('.u-legend .u-series');
    for (const i of helpers) rows[i]?.remove();
    live.add(chart);
  }
};

export const PALETTE = ['#2563eb', '#d97706', '#059669', '#7c3aed', '#dc2626', '#0891b2', '#be185d', '#4d7c0f'];
/** @param {string} hex @param {number} a */
const alpha = (hex, a) => {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
};

/** @param {HTMLElement} el */
const widthOf = (el) => Math.max(320, Math.floor(el.getBoundingClientRect().width || 640) - 8);

/** @param {() => Built} build @param {number} height @param {string} label */
const mount = (build, height, label) => {
  const box = h('div', { class: 'chart', role: 'img', 'aria-label': label });
  pending.push({ box, build, height });
  return box;
};

/** A y floor a little under the lowest value, in steps of 10%, so curves near the top stay readable. */
/** @param {Column[]} columns */
const floorOf = (columns) => {
  const values = columns.flat().filter((x) => typeof x === 'number');
  return values.length ? Math.max(0, Math.floor((values.reduce((a, b) => Math.min(a, b)) - 0.05) * 10) / 10) : 0;
};

/** @type {uPlot.Axis} */
const pctAxis = { values: (_u, ticks) => ticks.map((t) => `${Math.round(t * 100)}%`) };
const fg = () => getComputedStyle(document.body).getPropertyValue('--fg') || '#111';

/**
 * A share over x with its interval band: the line, two invisible helper series (hi, lo) left out of
 * the legend by `helpers`, and the band filled between them.
 */
/**
 * @param {Parts} chart
 * @param {{ line: uPlot.Series & { label: string }, values: Column, hi: Column, lo: Column, fill: string }} band
 */
const addBanded = (chart, { line, values, hi, lo, fill }) => {
  const idx = chart.data.length;
  chart.data.push(values, hi, lo);
  chart.series.push({ width: 2, ...line, value: (_u, x) => (x == null ? '—' : `${(x * 100).toFixed(1)}%`) });
  chart.series.push({ label: `${line.label} hi`, stroke: 'transparent', points: { show: false } });
  chart.series.push({ label: `${line.label} lo`, stroke: 'transparent', points: { show: false } });
  chart.helpers.push(idx + 1, idx + 2);
  chart.bands.push({ series: [idx + 1, idx + 2], fill });
};

/**
 * pass^k (solid) and pass@k (dashed) against k for each version, each with its bootstrap interval band.
 * `versions`: [{ name, passHat: {k: v}, passHatCI: {k: [lo, hi]}, passAt, passAtCI }]
 * @typedef {Record<string, number | null | undefined>} ByK
 * @typedef {Record<string, readonly [number, number] | null | undefined>} IntervalsByK
 * @param {readonly { name: string, passHat: ByK, passHatCI?: IntervalsByK, passAt: ByK, passAtCI?: IntervalsByK }[]} versions
 * @param {number} kMax
 */
export const passKChart = (versions, kMax) =>
  mount(
    () => {
      const ks = Array.from({ length: kMax }, (_, i) => i + 1);
      /** @type {Column[]} */
      const data = [ks];
      /** @type {uPlot.Series[]} */
      const series = [{ label: 'k', value: (_u, v) => (v == null ? '—' : String(v)) }];
      /** @type {uPlot.Band[]} */
      const bands = [];
      /** @type {number[]} */
      const helpers = [];
      versions.forEach((v, i) => {
        const color = PALETTE[i % PALETTE.length];
        for (const [kind, dash] of /** @type {const} */ ([
          ['Hat', undefined],
          ['At', [6, 4]],
        ])) {
          const values = kind === 'Hat' ? v.passHat : v.passAt;
          const cis = (kind === 'Hat' ? v.passHatCI : v.passAtCI) ?? {};
          addBanded(
            { data, series, bands, helpers },
            {
              line: {
                label: kind === 'Hat' ? `${v.name} pass^k` : `${v.name} pass@k`,
                stroke: color,
                ...(dash ? { dash: [...dash] } : {}),
                points: { size: 6 },
              },
              values: ks.map((k) => values[String(k)] ?? null),
              hi: ks.map((k) => cis[String(k)]?.[1] ?? null),
              lo: ks.map((k) => cis[String(k)]?.[0] ?? null),
              fill: alpha(color, kind === 'Hat' ? 0.16 : 0.07),
            },
          );
        }
      });
      return {
        data,
        helpers,
        opts: {
          series,
          bands,
          scales: { x: { time: false, range: [0.8, kMax + 0.2] }, y: { range: () => [floorOf(data.slice(1)), 1] } },
          axes: [
            { stroke: fg(), label: 'k (attempts)', splits: () => ks, values: (_u, t) => t.map(String) },
            { stroke: fg(), ...pctAxis },
          ],
          legend: { live: true },
          cursor: { drag: { x: false, y: false } },
        },
      };
    },
    300,
    'pass^k and pass@k by k, with interval bands',
  );

/** "stable-correct" → "stable-\ncorrect", "unclassified" → "un-\nclassified": a label on two lines. */
/** @param {string} label */
const twoLines = (label) =>
  label.includes('-') ? label.replace('-', '-\n') : label.startsWith('un') ? `un-\n${label.slice(2)}` : label;

/**
 * Bars: one value per category (e.g. the four stability classes).
 * @param {readonly string[]} labels
 * @param {Column} values
 * @param {{ color?: string, height?: number, label?: string }} [opts]
 */
export const barChart = (labels, values, { color = PALETTE[0], height = 180, label = 'bar chart' } = {}) =>
  mount(
    () => ({
      data: [labels.map((_, i) => i), values],
      opts: {
        series: [
          { label: 'class' },
          {
            label: 'rows',
            fill: alpha(color, 0.7),
            stroke: color,
            paths: uPlot.paths.bars?.({ size: [0.6, 80] }),
            points: { show: false },
          },
        ],
        scales: {
          x: { time: false, range: [-0.5, labels.length - 0.5] },
          y: { range: (_u, _lo, hi) => [0, Math.max(1, hi * 1.15)] },
        },
        axes: [
          {
            stroke: fg(),
            splits: () => labels.map((_, i) => i),
            // under ~100 px a category (a phone), each label breaks onto two lines instead of overlapping its neighbours
            values: (u) => (u.width / labels.length < 100 ? labels.map(twoLines) : [...labels]),
            size: (u) => (u.width / labels.length < 100 ? 48 : 30),
            grid: { show: false },
          },
          { stroke: fg(), size: 40 },
        ],
        legend: { show: false },
        cursor: { show: false },
      },
    }),
    height,
    label,
  );

/** Seconds since the epoch as `2026-12-06 02:00` (UTC). @param {number} s */
const utcMinute = (s) => new Date(s * 1000).toISOString().slice(0, 16).replace('T', ' ');

/**
 * Windowed pass rates over time, one line per (version, segment), each with its interval band.
 * `lines`: [{ name, points: [{ t, value, lo, hi }] }]
 * @param {readonly { name: string, points: readonly { t: number, value: number | null, lo: number | null, hi: number | null }[] }[]} lines
 */
export const windowsChart = (lines) =>
  mount(
    () => {
      const xs = [...new Set(lines.flatMap((l) => l.points.map((p) => p.t)))].sort((a, b) => a - b);
      /** @type {Column[]} */
      const data = [xs.map((t) => t / 1000)];
      /** @type {uPlot.Series[]} */
      const series = [{ label: 'window end (UTC)', value: (_u, v) => (v === null ? '—' : utcMinute(v)) }];
      /** @type {uPlot.Band[]} */
      const bands = [];
      /** @type {number[]} */
      const helpers = [];
      lines.forEach((l, i) => {
        const color = PALETTE[i % PALETTE.length];
        const at = new Map(l.points.map((p) => [p.t, p]));
        addBanded(
          { data, series, bands, helpers },
          {
            line: { label: l.name, stroke: color, spanGaps: false },
            values: xs.map((t) => at.get(t)?.value ?? null),
            hi: xs.map((t) => at.get(t)?.hi ?? null),
            lo: xs.map((t) => at.get(t)?.lo ?? null),
            fill: alpha(color, 0.12),
          },
        );
      });
      return {
        data,
        helpers,
        opts: {
          series,
          bands,
          // axis ticks in UTC, as every other time on the dashboard (uPlot's default is the browser's zone)
          tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
          scales: {
            // one window alone: an hour either side (uPlot widens a single instant to years)
            x: {
              time: true,
              range: (_u, min, max) => {
                const ts = /** @type {number[]} */ (data[0] ?? []);
                const [lo, hi] = ts.length > 0 ? [ts[0] ?? min, ts[ts.length - 1] ?? max] : [min, max];
                return lo === hi ? [lo - 3600, hi + 3600] : [lo, hi];
              },
            },
            y: { range: () => [floorOf(data.slice(1)), 1] },
          },
          axes: [{ stroke: fg() }, { stroke: fg(), ...pctAxis }],
        },
      };
    },
    280,
    'production pass rate by window',
  );
