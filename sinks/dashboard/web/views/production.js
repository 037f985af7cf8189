import { api } from '../api.js';
import { windowsChart } from '../charts.js';
import { card, ci, empty, h, pct, table, time } from '../dom.js';

export const title = 'Production';

/** The trace a dataset row's provenance links to: what was asked, what the live version answered, how it was graded. */
const traceCard = (t, id) =>
  t === null
    ? card(`Trace ${id}`, empty('This trace is not stored (or no longer: raw traces expire after the trace TTL).'))
    : card(
        `Trace ${t.trace_id}`,
        h(
          'dl',
          { class: 'trace', 'data-testid': 'trace', 'data-trace': t.trace_id },
          h('dt', {}, 'when'),
          h('dd', {}, time(t.occurred_at)),
          h('dt', {}, 'version · segment'),
          h('dd', {}, `${t.agent_version} · ${t.segment}`),
          h('dt', {}, 'sampled with probability'),
          h('dd', { 'data-field': 'probability' }, String(t.sampling_probability)),
          h('dt', {}, 'verdicts'),
          h(
            'dd',
            { 'data-field': 'verdicts' },
            t.verdicts
              .map((v) => `${v.grader}: ${v.passed === null ? 'ungraded' : v.passed ? 'pass' : 'fail'}`)
              .join(', ') || '—',
          ),
          h('dt', {}, 'output'),
          h('dd', { 'data-field': 'output' }, t.output ?? '—'),
          h('dt', {}, 'input'),
          h('dd', { 'data-field': 'input' }, h('pre', {}, t.input ?? '—')),
        ),
      );

export const render = async ({ params }) => {
  const [prod, trace] = await Promise.all([api.production(), params.trace ? api.trace(params.trace) : undefined]);
  if (prod.windows.length === 0 && prod.alerts.length === 0)
    return card(
      'No production traffic yet',
      empty(
        'Sample production traces with passk sample traces.jsonl --rate 0.05 (or the SDK middleware); they appear here in rolling windows per version and segment.',
      ),
    );
  const sizes = [...new Set(prod.windows.map((w) => w.size))];
  const size = params.size && sizes.includes(params.size) ? params.size : sizes[0];
  const shown = prod.windows.filter((w) => w.size === size);
  const keys = [...new Set(shown.map((w) => `${w.agent_version} · ${w.segment}`))].sort();
  const lines = keys.map((name) => ({
    name,
    points: shown
      .filter((w) => `${w.agent_version} · ${w.segment}` === name && w.pass_rate !== null)
      .map((w) => ({ t: w.end, value: w.pass_rate, lo: w.interval?.[0] ?? null, hi: w.interval?.[1] ?? null })),
  }));
  const latest = [...shown].sort((a, b) => b.end - a.end).slice(0, 12);
  return h(
    'div',
    { class: 'production' },
    trace === undefined ? null : traceCard(trace, params.trace),
    card(
      `Sampling-weighted pass rate, ${size} windows`,
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
              h(
                'a',
                { href: `#/production?size=${encodeURIComponent(s)}`, class: s === size ? 'active pill' : 'pill' },
                s,
              ),
            ),
          )
        : null,
      windowsChart(lines),
      h(
        'p',
        { class: 'note' },
        'Sampled counts every trace of the window, graded those with a verdict; a window with none has no pass rate (not 0). Late traces arrived after their window closed: they are stored, and counted here, not in the rate.',
      ),
      table(
        ['window', 'version', 'segment', 'sampled', 'graded', 'pass rate', '95% interval', 'late'],
        latest.map((w) =>
          h(
            'tr',
            {
              'data-version': w.agent_version,
              'data-segment': w.segment,
              'data-start': w.start,
              'data-end': w.end,
              'data-pass-rate': w.pass_rate ?? '',
              'data-sampled': w.traces,
              'data-graded': w.graded,
              'data-late': w.late ?? '',
            },
            h('td', {}, `${time(w.start)} → ${time(w.end).slice(11)}`),
            h('td', {}, w.agent_version),
            h('td', {}, w.segment),
            h('td', { 'data-field': 'sampled' }, String(w.traces)),
            h('td', { 'data-field': 'graded' }, String(w.graded)),
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
              ['input', 'version', 'traces', 'verdicts'],
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
                ),
              ),
              { 'data-testid': 'repeated-flips' },
            ),
      ),
    ),
  );
};
