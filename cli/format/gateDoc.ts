import type { RunSource } from '../../sinks/clickhouse/queries/runSources.ts';
import type { GateVerdict } from '../../processors/core/index.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import { confirmRunArgs } from '../../schemas/commandLine.ts';
import { heading, nextCommand, passkCommand, quoteArg, table, text, type Block } from './doc.ts';
import { rowList } from './numbers.ts';

const STATUS = { ok: 'good', broken: 'bad', unclassifiable: 'bad', not_covered: 'dim' } as const;

/** Rule ids as a reader says them (the dashboard's Gates view words them the same way; JSON keeps the ids). */
const RULE_TITLES: Record<string, string> = {
  must_not_break_stable_correct: 'must-not-break rows stay stable-correct',
  must_not_break_classifiable: 'must-not-break rows have enough attempts',
  zero_forbidden_actions: 'zero forbidden actions',
  pass_at_1_drop: 'no decline in pass@1',
  pass_hat_k: 'pass^k bar on tagged rows',
  judge_agreement: 'judges agree with human labels',
};
export const ruleTitle = (rule: string): string => RULE_TITLES[rule] ?? rule.replaceAll('_', ' ');
/** `stable_correct`, `not_covered`, `confirmed_regression` → words. */
export const words = (id: string): string =>
  id.replaceAll('stable_correct', 'stable-correct').replaceAll('stable_wrong', 'stable-wrong').replaceAll('_', ' ');

const rowsSaid = (rows: readonly string[]): string => (rows.length ? ` (${rowList(rows, 8)})` : '');

/** The verdict in one plain sentence: whether the candidate may ship, and what failed on which rows. */
export const verdictSentence = (v: {
  verdict: 'pass' | 'fail';
  baseline: string;
  candidate: string;
  rules: readonly { passed: boolean; detail: string; rows?: readonly string[] | undefined }[];
}): string => {
  if (v.verdict === 'pass') return `${v.candidate} may ship: all ${v.rules.length} rules passed against ${v.baseline}.`;
  const failed = v.rules.filter((r) => !r.passed);
  return `${v.candidate} may not ship: ${failed.map((r) => `${r.detail}${rowsSaid(r.rows ?? [])}`).join('; and ')}.`;
};

/** What a gate verdict prints: `passk gate`'s GateVerdict and the processors' GateEvaluated both have it. */
export interface RuleView {
  readonly verdict: 'pass' | 'fail';
  readonly baseline: string;
  readonly candidate: string;
  readonly rules: readonly {
    rule: string;
    passed: boolean;
    detail: string;
    suite?: string;
    dataset_version?: string;
    rows?: readonly string[];
  }[];
  /** Absent on a GateEvaluated of schema version 1, which did not carry them. */
  readonly must_not_break?: GateVerdict['must_not_break'];
}

/**
 * Must-not-break rows the gate cannot protect: the baseline does not get them right every time (it flips, or is
 * stable-wrong), so no candidate can break them. Said, with the rows, whenever there are any: the verdict's "all
 * rules passed" is true of the other rows only.
 */
export const unprotectedLine = (mnb: RuleView['must_not_break']): string | undefined => {
  const rows = (mnb ?? []).filter((m) => m.status === 'not_covered');
  if (rows.length === 0) return undefined;
  const said = rows.map((m) => `${m.row_id} (${words(m.baseline.class)} ${m.baseline.c}/${m.baseline.n})`);
  return (
    `${rows.length} must-not-break ${rows.length === 1 ? 'row is' : 'rows are'} not protected: the baseline is not ` +
    `stable-correct on ${rows.length === 1 ? 'it' : 'them'}, so no rule binds: ${rowList(said, 12)}. Fix the baseline ` +
    'or the rows before trusting the gate with them.'
  );
};

/**
 * What an adaptive candidate's decision took, the confirmation attempts said apart (the run itself printed only its
 * own: "decided after 93 attempts", so "96 attempts" alone read as a miscount): "decided after 96 attempts of v2
 * (93 planned + 3 confirmation; fixed k would have used 192: 24 rows × 8)".
 */
export const decidedAfter = (c: {
  readonly attempts: number;
  readonly confirmations: number;
  readonly candidate: string;
  readonly fixed: number;
  readonly rows: number;
  readonly maxK: number;
}): string =>
  `decided after ${c.attempts} attempts of ${c.candidate} (` +
  (c.confirmations > 0 ? `${c.attempts - c.confirmations} planned + ${c.confirmations} confirmation; ` : '') +
  `fixed k would have used ${c.fixed}: ${c.rows} rows × ${c.maxK})`;

/** A verdict as `passk gate` prints it: the rules, then the must-not-break table. One document for every source. */
export const ruleBlocks = (v: RuleView): Block[] => {
  const pass = v.verdict === 'pass';
  const mnb = v.must_not_break;
  const unprotected = unprotectedLine(mnb);
  return [
    heading(
      `GATE ${pass ? 'PASS' : 'FAIL'}: candidate ${v.candidate} against baseline ${v.baseline}`,
      1,
      pass ? 'good' : 'bad',
    ),
    text(verdictSentence(v), pass ? 'good' : 'bad'),
    ...(unprotected ? [text(unprotected, 'warn')] : []),
    table(
      ['', 'rule', 'suite', 'detail', 'rows'],
      v.rules.map((r) => [
        r.passed ? { text: 'pass', tone: 'good' } : { text: 'FAIL', tone: 'bad' },
        ruleTitle(r.rule),
        r.suite === undefined ? '' : `${r.suite} (${r.dataset_version})`,
        r.detail,
        rowList(r.rows ?? [], 12),
      ]),
    ),
    ...(mnb === undefined
      ? []
      : mnb.length
        ? [
            heading(`Must-not-break rows (${mnb.length})`, 2),
            table(
              ['suite', 'row', 'baseline (all attempts)', 'candidate (all attempts)', 'status', 'confirmation'],
              mnb.map((m) => [
                m.suite,
                m.row_id,
                `${words(m.baseline.class)} ${m.baseline.c}/${m.baseline.n}`,
                `${words(m.candidate.class)} ${m.candidate.c}/${m.candidate.n}`,
                { text: words(m.status), tone: STATUS[m.status] },
                words(m.outcome ?? ''),
              ]),
            ),
          ]
        : [text('No must-not-break rows: tag rows must_not_break or pass --must-not-break FILE.', 'warn')]),
    text(''),
  ];
};

/** The processors' verdict in the same document (a schema-version-1 event has no must-not-break rows to show). */
export const evaluatedView = (e: GateEvaluated): RuleView => ({
  verdict: e.verdict,
  baseline: e.baseline,
  candidate: e.candidate,
  rules: e.reasons,
  ...(e.must_not_break ? { must_not_break: e.must_not_break } : {}),
});

/** Row ids written to suspects.txt by a command that runs as printed (printf for a few, jq over compare's JSON beyond). */
const SUSPECTS_INLINE = 20;
/** Where the versions ran, when known: the suite and each version's latest `passk run` (RunFinished, the store). */
export type RunScope = { suite: string; sources: Record<string, RunSource> };
const confirmRun = (version: string, known?: RunScope): string => {
  const source = known?.sources[version];
  // the suite only with the run it comes from: a verdict's rules may span suites
  return passkCommand(confirmRunArgs({ version, ...(source ? { suite: known!.suite, source } : {}) }));
};

/**
 * What running again can and cannot do to such a row: a failed attempt of the candidate's stays counted, so the row
 * stops failing the gate only when the baseline fails on it too (never reliably right: baseline_also_varies); a new
 * user, told to run again with nothing more, ran the confirmations, passed them all, and met the same verdict.
 */
const UNRESOLVED_AFTER =
  'A row stops failing the gate only if the baseline fails on it too; else it stays broken (confirmed if the candidate fails again)';

/**
 * The commands that settle broken must-not-break rows no confirmation has reproduced yet: their ids into
 * suspects.txt, then a confirmation run of each version on them. ROWS.jsonl and AGENT_OF_… are the dataset file and
 * the agent (module, URL or cmd:) each version ran with: the verdict does not know them.
 */
export const confirmationNext = (
  v: Pick<RuleView, 'baseline' | 'candidate' | 'must_not_break'>,
  source: string,
  known?: RunScope,
): Block[] => {
  const rows = (v.must_not_break ?? [])
    .filter((m) => m.status === 'broken' && m.outcome === 'unresolved')
    .map((m) => m.row_id);
  if (rows.length === 0) return [];
  const ids =
    rows.length <= SUSPECTS_INLINE
      ? `printf '%s\\n' ${rows.map(quoteArg).join(' ')} > suspects.txt`
      : `${passkCommand(`compare --baseline ${quoteArg(v.baseline)} --candidate ${quoteArg(v.candidate)} --json ${source}`)} | jq -r '.comparisons[].confirmation.rows[] | select(.outcome == "unresolved") | .row_id' > suspects.txt`;
  const full = [v.baseline, v.candidate].every((x) => known?.sources[x]);
  return [
    text(
      `${rows.length} broken must-not-break row${rows.length === 1 ? ' is' : 's are'} unresolved: run both versions again on ${rows.length === 1 ? 'it' : 'them'}${full ? ' (the dataset file and agent of their latest passk run)' : ' (ROWS.jsonl: the dataset file; AGENT_OF_…: the agent each version ran with)'}, then gate again. ${UNRESOLVED_AFTER}:`,
      'warn',
    ),
    nextCommand(ids),
    nextCommand(confirmRun(v.baseline, known)),
    nextCommand(confirmRun(v.candidate, known)),
  ];
};

/**
 * After a failing verdict, in a terminal: the confirmation runs its unresolved rows still need, then the comparison
 * that shows the regressions and where each diverges first.
 */
export const gateNext = (
  v: Pick<RuleView, 'verdict' | 'baseline' | 'candidate' | 'must_not_break'>,
  source: string,
  known?: RunScope,
): Block[] =>
  v.verdict === 'fail'
    ? [
        ...confirmationNext(v, source, known),
        nextCommand(
          passkCommand(`compare --baseline ${quoteArg(v.baseline)} --candidate ${quoteArg(v.candidate)} ${source}`),
        ),
      ]
    : [];
