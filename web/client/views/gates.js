// @ts-check
/* global URLSearchParams */
import { api } from '../api.js';
import { card, className, command, empty, h, table, time } from '../dom.js';
import { rowsLink } from './rows.js';
/**
 * @import { Answer } from '../../contract.ts'
 * @import { Scope, ViewContext } from '../view.d.ts'
 * @typedef {Answer<'/api/gates'>[number]} Gate
 */

export const title = 'Gates';
/** The verdict shown from the history (the newest by default). */
export const params = ['gate'];

/** @type {Record<string, string>} */
const RULE_NAMES = {
  must_not_break_stable_correct:
    'Every must-not-break row stable-correct on the baseline is still stable-correct on the candidate',
  must_not_break_classifiable: 'Every must-not-break row has enough attempts to classify',
  zero_forbidden_actions: 'Zero forbidden actions',
  pass_at_1_drop: 'No decline in pass@1',
  pass_hat_k: 'pass^k bar on tagged rows',
  judge_agreement: 'Judges agree with human labels',
};
/** @param {string} r */
export const ruleName = (r) => RULE_NAMES[r] ?? r;

/** @param {'pass' | 'fail'} v */
const verdictBadge = (v) =>
  h('span', { class: `verdict ${v}`, 'data-testid': 'verdict', 'data-verdict': v }, v === 'pass' ? 'PASS' : 'FAIL');

/**
 * The must-not-break rows the gate cannot protect (the baseline is not stable-correct on them), named under the
 * verdict as `passk gate` warns of them: each row a chip that opens its attempts, per suite and dataset version.
 * @param {Gate} g @param {ViewContext['go']} navigate
 */
const unprotectedWarning = (g, navigate) => {
  const rows = g.unprotected;
  if (rows.length === 0) return null;
  /** @type {Map<string, Gate['unprotected']>} */
  const groups = new Map();
  for (const m of rows) {
    const key = `${m.suite}\u0000${m.dataset_version}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  const one = rows.length === 1;
  return h(
    'div',
    { class: 'unprotected', 'data-testid': 'unprotected' },
    h(
      'p',
      { class: 'warn' },
      `${rows.length} must-not-break ${one ? 'row is' : 'rows are'} not protected: the baseline is not ` +
        `stable-correct on ${one ? 'it' : 'them'}, so no rule binds. Fix the baseline or the rows before trusting ` +
        `the gate with ${one ? 'it' : 'them'}.`,
    ),
    [...groups.values()].map((group) => {
      const { suite, dataset_version } = group[0];
      const scope = { suite, dataset_version, baseline: g.baseline, candidate: g.candidate };
      const ids = group.map((m) => m.row_id).join(',');
      const elsewhere = suite !== g.suite || dataset_version !== g.dataset_version;
      return h(
        'div',
        { class: 'chips' },
        elsewhere ? h('span', { class: 'note' }, `${suite} · dataset ${dataset_version}: `) : null,
        group.map((m) =>
          h(
            'button',
            {
              class: 'chip mnb link',
              'data-row': m.row_id,
              'data-class': m.baseline.class,
              title: `the baseline is ${className(m.baseline.class)}: ${m.baseline.c} of ${m.baseline.n} attempts correct; open its attempts side by side`,
              onclick: () => navigate('rows', { ...scope, ids, row: m.row_id }),
            },
            `${m.row_id} (${className(m.baseline.class)} ${m.baseline.c}/${m.baseline.n})`,
          ),
        ),
        h(
          'a',
          { class: 'open-rows', href: rowsLink({ ...scope, ids }) },
          `open ${group.length === 1 ? 'this row' : `these ${group.length} rows`} in the explorer`,
        ),
      );
    }),
  );
};

/** @param {Gate} g @param {ViewContext['go']} navigate @param {boolean} newest */
const current = (g, navigate, newest) =>
  card(
    newest ? 'Current verdict' : 'Verdict (from the history)',
    h(
      'div',
      { class: 'gate-head', 'data-testid': 'current-gate', 'data-gate': g.gate_id },
      verdictBadge(g.verdict),
      h(
        'div',
        {},
        h('div', { class: 'big' }, `${g.baseline} → ${g.candidate}`),
        h(
          'div',
          { class: 'note' },
          `${g.suite} · dataset ${g.dataset_version} · ${time(g.occurred_at)} · gate ${g.gate_id}`,
        ),
      ),
    ),
    unprotectedWarning(g, navigate),
    g.adaptive
      ? h(
          'p',
          { class: 'note', 'data-testid': 'adaptive-cost' },
          // the confirmation attempts said apart, as passk gate says it: the adaptive run printed only its own
          `decided after ${g.adaptive.attempts} attempts (` +
            (g.adaptive.confirmations === undefined
              ? 'confirmations included; '
              : g.adaptive.confirmations > 0
                ? `${g.adaptive.attempts - g.adaptive.confirmations} planned + ${g.adaptive.confirmations} confirmation; `
                : '') +
            `fixed k would have used ${g.adaptive.rows * g.adaptive.max_k}: ${g.adaptive.rows} rows × ${g.adaptive.max_k})`,
        )
      : null,
    g.repeated_verdict
      ? h(
          'p',
          { class: 'warn' },
          'A second verdict on the same candidate: re-running to get a different gate result is not allowed (no gate shopping).',
        )
      : null,
    h(
      'ul',
      { class: 'reasons', 'data-testid': 'reasons' },
      g.reasons.map((r) =>
        h(
          'li',
          { class: r.passed ? 'ok' : 'bad', 'data-rule': r.rule },
          h('span', { class: 'mark' }, r.passed ? '✓' : '✗'),
          h(
            'div',
            {},
            h('div', { class: 'rule' }, ruleName(r.rule)),
            h('div', { class: 'detail' }, r.detail),
            r.rows?.length
              ? h(
                  'div',
                  { class: 'chips' },
                  r.rows.map((row) =>
                    h(
                      'button',
                      {
                        class: 'chip mnb link',
                        'data-row': row,
                        title: 'open its attempts side by side',
                        onclick: () =>
                          navigate('rows', {
                            suite: g.suite,
                            dataset_version: g.dataset_version,
                            baseline: g.baseline,
                            candidate: g.candidate,
                            ids: r.rows.join(','),
                            row,
                          }),
                      },
                      row,
                    ),
                  ),
                  h(
                    'a',
                    {
                      class: 'open-rows',
                      href: rowsLink({
                        suite: g.suite,
                        dataset_version: g.dataset_version,
                        baseline: g.baseline,
                        candidate: g.candidate,
                        ids: r.rows.join(','),
                      }),
                    },
                    `open ${r.rows.length === 1 ? 'this row' : `these ${r.rows.length} rows`} in the explorer`,
                  ),
                )
              : null,
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'note' },
      `Computed from recorded verdicts only; the attempts behind ${g.evidence_rows} rows are listed as its evidence.`,
    ),
  );

/**
 * Opened without a scope, the view shows the latest gate's, whichever suite it is on (the scope list puts the suite
 * with the latest trials first, which need not be the one a gate was evaluated on).
 */
/** @param {readonly Scope[]} scopes @returns {Promise<Scope | undefined>} */
export const scopeOf = async (scopes) => {
  const [latest] = await api.gates();
  if (!latest) return undefined;
  return (
    scopes.find((s) => s.suite === latest.suite && s.dataset_version === latest.dataset_version) ??
    scopes.find((s) => s.suite === latest.suite)
  );
};

/** What to do when no gate is evaluated: declare one, run the confirmations it asks for (the server's commands). */
const declare = async () => {
  const cmds = await api.commands();
  return empty(
    'Declare a comparison:',
    command(cmds.declare),
    'The processors decide it once both runs are complete, after any confirmation runs they ask for, run once with the agent of each version:',
    command(cmds.confirmations),
  );
};

/** @param {ViewContext} ctx */
export const render = async ({ scope, params, go, navigate, warn }) => {
  const gates = await api.gates(scope ? { suite: scope.suite } : {});
  if (gates.length === 0) {
    const [elsewhere] = scope ? await api.gates() : [];
    if (params.gate) warn(`No gate "${params.gate}" (gate=) on ${scope?.suite ?? 'this store'}.`);
    return elsewhere
      ? card(
          `No gate has been evaluated on ${scope?.suite}`,
          h(
            'p',
            { 'data-testid': 'gate-elsewhere' },
            `The latest gate is on ${elsewhere.suite} · dataset ${elsewhere.dataset_version} (${time(elsewhere.occurred_at)}): `,
            h(
              'a',
              {
                href: `#/gates?${new URLSearchParams({ suite: elsewhere.suite, dataset_version: elsewhere.dataset_version })}`,
              },
              `${elsewhere.baseline} → ${elsewhere.candidate}, ${elsewhere.verdict === 'pass' ? 'PASS' : 'FAIL'}`,
            ),
            '.',
          ),
          await declare(),
        )
      : card('No gate has been evaluated yet', await declare());
  }
  const sorted = gates;
  // The newest verdict is the current one; a row of the history shows an older one in its place (?gate=ID).
  const picked = params.gate ? sorted.find((g) => g.gate_id === params.gate) : undefined;
  if (params.gate && !picked)
    warn(`No gate "${params.gate}" (gate=) on ${scope?.suite ?? 'this store'}; showing the newest verdict.`);
  const shown = picked ?? sorted[0];
  return h(
    'div',
    { class: 'gates' },
    current(shown, go, shown === sorted[0]),
    card(
      'History',
      table(
        ['when', 'baseline → candidate', 'dataset', 'verdict', 'failed rules', 'rows'],
        sorted.map((g) =>
          h(
            'tr',
            { 'data-gate': g.gate_id, 'data-verdict': g.verdict, class: g === shown ? 'highlight' : '' },
            h(
              'td',
              {},
              h(
                'a',
                {
                  href: '#',
                  onclick: (/** @type {Event} */ e) => (
                    e.preventDefault(),
                    navigate({ gate: g.gate_id }, { keep: true })
                  ),
                },
                time(g.occurred_at),
              ),
            ),
            h('td', {}, `${g.baseline} → ${g.candidate}`),
            h('td', {}, g.dataset_version),
            h(
              'td',
              { class: 'verdict-cell' },
              verdictBadge(g.verdict),
              g.repeated_verdict ? ' (repeated)' : '',
              g.unprotected.length ? ` · ${g.unprotected.length} not protected` : '',
            ),
            h(
              'td',
              {},
              g.reasons
                .filter((r) => !r.passed)
                .map((r) => r.rule)
                .join(', ') || '—',
            ),
            h('td', {}, g.reasons.flatMap((r) => (r.passed ? [] : (r.rows ?? []))).join(', ') || '—'),
          ),
        ),
        { class: 'history', 'data-testid': 'gate-history' },
      ),
    ),
  );
};
