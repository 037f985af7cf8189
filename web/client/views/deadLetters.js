// @ts-check
import { api } from '../api.js';
import { card, command, empty, h, table, time } from '../dom.js';

/** @type {string[]} */
export const params = [];
export const title = 'Dead letters';

/** @type {Record<string, string>} */
const STAGES = {
  decode: 'log records the processors could not decode or validate',
  conflict: 'trials conflicting with an attempt already recorded',
  ingest: 'spans or log records passk ingest refused or evicted',
  sink: 'rows the store refused',
};

/** Every dead letter the store holds: where it came from, why it was refused, and the start of its bytes. */
export const render = async () => {
  const dlq = await api.deadLetters();
  if (dlq.total === 0)
    return card(
      'No dead letters',
      empty(
        'Every record the processors read was a valid event, passk ingest took every span, and the store took every row. A record that is not is kept here (and in the dead-letter topic) with its bytes and the reason, once.',
      ),
    );
  const counts = Object.entries(dlq.by_stage)
    .map(([stage, n]) => `${n} ${STAGES[stage] ?? stage}`)
    .join('; ');
  return card(
    `Dead letters (${dlq.total})`,
    h('p', { class: 'note', 'data-testid': 'dead-letter-counts' }, counts),
    dlq.letters.length < dlq.total
      ? h(
          'p',
          { class: 'note' },
          `The newest ${dlq.letters.length} are listed; this lists them all:`,
          command((await api.commands()).check),
        )
      : null,
    table(
      ['recorded', 'stage', 'topic', 'partition', 'offset', 'reason', 'bytes'],
      dlq.letters.map((l) =>
        h(
          'tr',
          {
            'data-id': l.id,
            'data-stage': l.stage,
            'data-topic': l.source_topic,
            'data-partition': l.source_partition,
            'data-offset': l.source_offset,
          },
          h('td', {}, time(l.recorded_at)),
          h('td', {}, l.stage),
          h('td', {}, l.stage === 'sink' ? `table ${l.target_table}` : l.source_topic),
          h('td', {}, l.source_partition < 0 ? '—' : String(l.source_partition)),
          h('td', {}, l.source_offset < 0 ? '—' : String(l.source_offset)),
          h('td', { class: 'reason', 'data-field': 'reason' }, l.reason),
          h('td', { 'data-field': 'preview', title: `${l.bytes} bytes` }, h('code', {}, l.preview)),
        ),
      ),
      { 'data-testid': 'dead-letters' },
    ),
  );
};
