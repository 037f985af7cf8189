import { api } from '../api.js';
import { card, empty, h, table, time } from '../dom.js';

export const title = 'Datasets';

const provenance = (p) =>
  p.kind === 'production_failure' && p.trace_id
    ? h(
        'a',
        { href: `#/production?trace=${encodeURIComponent(p.trace_id)}`, 'data-trace': p.trace_id },
        `production trace ${p.trace_id}`,
      )
    : p.kind;

const removedCell = (ids) =>
  ids.length === 0 ? '—' : `${ids.length} (${ids.slice(0, 4).join(', ')}${ids.length > 4 ? ', …' : ''})`;

export const render = async ({ params }) => {
  const versions = await api.datasets();
  if (versions.length === 0)
    return card(
      'No dataset versions yet',
      empty(
        'Publish a dataset version: passk dataset publish rows.jsonl --dataset ID. Failures confirmed with passk review --confirm appear here too.',
      ),
    );
  const sorted = [...versions].sort((a, b) => (b.created_at ?? 0) - (a.created_at ?? 0));
  return h(
    'div',
    { class: 'datasets' },
    card(
      'Versions',
      table(
        ['dataset', 'version', 'created', 'rows', 'removed', 'must-not-break', 'from production'],
        sorted.map((v) =>
          h(
            'tr',
            {
              'data-dataset': v.dataset_id,
              'data-version': v.dataset_version,
              'data-rows': v.rows,
              'data-removed': (v.removed ?? []).join(' '),
              'data-mnb': v.must_not_break.length,
            },
            h('td', {}, v.dataset_id),
            h('td', {}, v.dataset_version),
            h('td', {}, time(v.created_at)),
            h('td', {}, String(v.rows)),
            h('td', {}, removedCell(v.removed ?? [])),
            h('td', {}, String(v.must_not_break.length)),
            h('td', {}, String(v.from_production.length)),
          ),
        ),
        { 'data-testid': 'dataset-versions' },
      ),
    ),
    sorted.map((v) =>
      card(
        `${v.dataset_id} · ${v.dataset_version}: must-not-break rows (${v.must_not_break.length})`,
        h(
          'p',
          { class: 'note' },
          'Tagged before any result is seen; a confirmed production failure joins them in a new dataset version.',
        ),
        table(
          ['row', 'expected', 'tags', 'provenance'],
          v.must_not_break.map((r) =>
            h(
              'tr',
              {
                'data-row': r.row_id,
                class: `${r.provenance.kind === 'production_failure' ? 'highlight' : ''}${r.row_id === params.row ? ' selected' : ''}`,
              },
              h('td', {}, r.row_id),
              h('td', {}, r.expected ?? '—'),
              h('td', {}, r.tags.join(', ')),
              h('td', {}, provenance(r.provenance)),
            ),
          ),
          { 'data-testid': 'mnb-rows', 'data-version': v.dataset_version },
        ),
      ),
    ),
  );
};
