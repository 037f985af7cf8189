// @ts-check
import { api } from '../api.js';
import { card, command, empty, h, table, time } from '../dom.js';
/**
 * @import { Answer } from '../../contract.ts'
 * @import { ViewContext } from '../view.d.ts'
 * @typedef {Answer<'/api/datasets'>[number]} DatasetVersion
 */

/** A row to point at (from a production trace's card), in its dataset and version. */
export const params = ['dataset', 'version', 'row'];
export const title = 'Datasets';

/** @param {DatasetVersion['must_not_break'][number]['provenance']} p */
const provenance = (p) =>
  p.kind === 'production_failure' && p.trace_id
    ? h(
        'a',
        { href: `#/production?trace=${encodeURIComponent(p.trace_id)}`, 'data-trace': p.trace_id },
        `production trace ${p.trace_id}`,
      )
    : p.kind;

/** @param {readonly string[]} ids */
const removedCell = (ids) =>
  ids.length === 0 ? '—' : `${ids.length} (${ids.slice(0, 4).join(', ')}${ids.length > 4 ? ', …' : ''})`;

/** @param {ViewContext} ctx */
export const render = async ({ params, warn }) => {
  const versions = await api.datasets();
  if (versions.length === 0) {
    const cmds = await api.commands();
    return card(
      'No dataset versions yet',
      empty(
        'Publish a dataset version:',
        command(cmds.publish),
        `Failures confirmed with ${cmds.passk} review --confirm appear here too.`,
      ),
    );
  }
  const sorted = [...versions].sort((a, b) => (b.created_at ?? 0) - (a.created_at ?? 0));
  /** @param {DatasetVersion} v */
  const named = (v) =>
    (!params.dataset || v.dataset_id === params.dataset) && (!params.version || v.dataset_version === params.version);
  if ((params.dataset || params.version) && !sorted.some(named))
    warn(
      `No dataset version ${[params.dataset && `dataset=${params.dataset}`, params.version && `version=${params.version}`].filter(Boolean).join(', ')} here; showing every version.`,
    );
  const pointed = sorted.some(named) ? named : () => true;
  if (params.row && !sorted.some((v) => pointed(v) && v.must_not_break.some((r) => r.row_id === params.row)))
    warn(`No must-not-break row "${params.row}" (row=) in ${params.dataset ?? 'any dataset'}; nothing is highlighted.`);
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
              class: (params.dataset || params.version) && named(v) ? 'highlight' : '',
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
                class: `${r.provenance.kind === 'production_failure' ? 'highlight' : ''}${r.row_id === params.row && pointed(v) ? ' selected' : ''}`,
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
