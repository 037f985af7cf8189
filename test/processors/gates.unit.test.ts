import { describe, expect, it } from 'vitest';
import type { RunClosed } from '../../schemas/events/comparisons.ts';
import { GateEvaluated } from '../../schemas/events/decisions.ts';
import { decideComparison, emptyBook, evolveBook, type GateView } from '../../processors/folds/gates.ts';
import { evolveDataset, type DatasetState } from '../../processors/core/datasets.ts';
import { evolveRow, type StreamRowState } from '../../processors/folds/rowState.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { comparison, datasetRow, failureConfirmed, runOf } from '../helpers/feedbackLoop.ts';
import { oneOfEach } from '../helpers/events.ts';
import { candidateKey } from '../../schemas/topics.ts';

const viewOf = (
  trials: readonly TrialRecorded[],
  datasets: DatasetState[] = [],
  closed: readonly RunClosed[] = [],
): GateView => {
  const rows = new Map<string, Map<string, StreamRowState>>();
  for (const t of trials) {
    const key = `${t.suite}|${t.dataset_version}|${t.agent.version}`;
    const table = rows.get(key) ?? new Map<string, StreamRowState>();
    rows.set(key, table);
    table.set(t.row_id, evolveRow(table.get(t.row_id), t));
  }
  return {
    rows: (s, d, a) => rows.get(`${s}|${d}|${a}`) ?? new Map(),
    dataset: (id) => datasets.find((d) => d.dataset_id === id),
    closed: (s, a) => closed.filter((r) => r.suite === s && r.agent_version === a),
  };
};
const ROWS = ['r1', 'r2', 'r3'];
const bookWith = (...declared: ReturnType<typeof comparison>[]) => declared.reduce(evolveBook, emptyBook());

describe('live gates', () => {
  it('sees the forbidden actions and trial tags of the trials behind a row state (zero_forbidden_actions)', () => {
    const book = bookWith(
      comparison('cf', 'd1', 'base', 'cand', {
        dataset_id: undefined,
        rows: 3,
        rules: { zero_forbidden_actions: true },
      }),
    );
    const clean = [...runOf('base', 'd1', ROWS), ...runOf('cand', 'd1', ROWS)] as TrialRecorded[];
    const [pass] = decideComparison(book, book.comparisons.cf!, viewOf(clean), { producer: 'p' });
    expect(pass).toMatchObject({ verdict: 'pass' });
    expect((pass as GateEvaluated).reasons.find((r) => r.rule === 'zero_forbidden_actions')).toMatchObject({
      passed: true,
    });

    const forbidden = clean.map((t) =>
      t.agent.version === 'cand' && t.row_id === 'r2' && t.attempt === 1
        ? { ...t, forbidden_actions: ['refund_without_receipt'], tags: ['vip'] }
        : t,
    );
    const view = viewOf(forbidden);
    expect(view.rows('refunds', 'd1', 'cand').get('r2')).toMatchObject({ tags: ['vip'] });
    const [fail] = decideComparison(book, book.comparisons.cf!, view, { producer: 'p' });
    expect(fail).toMatchObject({ verdict: 'fail' });
    expect((fail as GateEvaluated).reasons.find((r) => r.rule === 'zero_forbidden_actions')).toMatchObject({
      passed: false,
    });
  });

  it('waits until the candidate has the required attempts on every row', () => {
    const book = bookWith(comparison('c1', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3 }));
    const partial = [...runOf('base', 'd1', ROWS), ...runOf('cand', 'd1', ROWS).slice(0, 7)] as TrialRecorded[];
    expect(decideComparison(book, book.comparisons.c1!, viewOf(partial), { producer: 'p' })).toEqual([]);
    const full = [...runOf('base', 'd1', ROWS), ...runOf('cand', 'd1', ROWS)] as TrialRecorded[];
    const [verdict] = decideComparison(book, book.comparisons.c1!, viewOf(full), { producer: 'p' });
    expect(verdict).toMatchObject({
      type: 'GateEvaluated',
      verdict: 'pass',
      gate_id: 'c1',
      baseline: 'base',
      candidate: 'cand',
    });
  });

  it('asks for confirmation runs on suspected regressions, then decides on them', () => {
    const declared = comparison('c2', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3, must_not_break: ['r2'] });
    const book = bookWith(declared);
    const screening = [
      ...runOf('base', 'd1', ROWS),
      ...runOf('cand', 'd1', ROWS, { fails: ['r2'] }),
    ] as TrialRecorded[];
    const [request] = decideComparison(book, book.comparisons.c2!, viewOf(screening), { producer: 'p' });
    expect(request).toMatchObject({ type: 'ConfirmationRequested', rows: ['r2'], attempts: 3, run_id: 'confirm-c2' });
    const confirming = evolveBook(book, request!);
    expect(decideComparison(confirming, confirming.comparisons.c2!, viewOf(screening), { producer: 'p' })).toEqual([]);
    const confirmation = [
      ...runOf('base', 'd1', ['r2'], { run: 'confirm-c2' }),
      ...runOf('cand', 'd1', ['r2'], { run: 'confirm-c2', fails: ['r2'] }),
    ].map((t, i) => ({
      ...t,
      event_id: t.event_id.slice(0, 24) + String(10 + i).slice(-2),
      attempt: (t as TrialRecorded).attempt + 3,
    })) as TrialRecorded[];
    const [verdict] = decideComparison(
      confirming,
      confirming.comparisons.c2!,
      viewOf([...screening, ...confirmation]),
      { producer: 'p' },
    ) as GateEvaluated[];
    expect(verdict).toMatchObject({ type: 'GateEvaluated', verdict: 'fail' });
    expect(verdict!.reasons.find((r) => r.rule === 'must_not_break_stable_correct')).toMatchObject({
      passed: false,
      rows: ['r2'],
    });
    expect(verdict!.evidence.find((e) => e.row_id === 'r2')!.candidate_attempts).toHaveLength(6);
    // the verdict carries what passk gate prints: each rule's suite and every must-not-break row's classes
    expect(verdict!.reasons.every((r) => r.suite === verdict!.suite && r.dataset_version === 'd1')).toBe(true);
    expect(verdict!.must_not_break).toEqual([
      expect.objectContaining({
        row_id: 'r2',
        baseline: { n: 6, c: 6, class: 'stable_correct' },
        candidate: { n: 6, c: 0, class: 'stable_wrong' },
        status: 'broken',
        outcome: 'confirmed_regression',
      }),
    ]);
    expect(GateEvaluated.parse(verdict)).toEqual(verdict);
  });

  it('asks more confirmation attempts on a must-not-break suspect when declared, and waits for them', () => {
    const declared = comparison('c3', 'd1', 'base', 'cand', {
      dataset_id: undefined,
      rows: 3,
      must_not_break: ['r2'],
      must_not_break_extra_attempts: 2,
    });
    const book = bookWith(declared);
    const screening = [
      ...runOf('base', 'd1', ROWS),
      ...runOf('cand', 'd1', ROWS, { fails: ['r1', 'r2'] }),
    ] as TrialRecorded[];
    const [request] = decideComparison(book, book.comparisons.c3!, viewOf(screening), { producer: 'p' });
    // r1 gets the declared default of 3 more attempts per version; r2, tagged must-not-break, 3 + 2
    expect(request).toMatchObject({
      type: 'ConfirmationRequested',
      rows: ['r1', 'r2'],
      attempts: 3,
      must_not_break: { rows: ['r2'], attempts: 5 },
    });
    const confirming = evolveBook(book, request!);
    const confirm = (k: (row: string) => number) =>
      ['base', 'cand'].flatMap((v, vi) =>
        ['r1', 'r2'].flatMap((row, ri) =>
          (
            runOf(v, 'd1', [row], { run: 'confirm-c3', k: k(row), fails: v === 'cand' ? [row] : [] }) as TrialRecorded[]
          ).map((t) => ({
            ...t,
            event_id: t.event_id.slice(0, 22) + String(1000 + vi * 100 + ri * 10 + t.attempt).slice(-4),
            attempt: t.attempt + 3,
          })),
        ),
      );
    const decide = (trials: TrialRecorded[]) =>
      decideComparison(confirming, confirming.comparisons.c3!, viewOf([...screening, ...trials]), { producer: 'p' });
    // 3 confirmation attempts on every row are not enough: r2 was asked 5
    expect(decide(confirm(() => 3))).toEqual([]);
    const [verdict] = decide(confirm((row) => (row === 'r2' ? 5 : 3))) as GateEvaluated[];
    expect(verdict).toMatchObject({ type: 'GateEvaluated', verdict: 'fail' });
    expect(verdict!.evidence.find((e) => e.row_id === 'r1')!.candidate_attempts).toHaveLength(6);
    expect(verdict!.evidence.find((e) => e.row_id === 'r2')!.candidate_attempts).toHaveLength(8);
  });

  it('cannot call a run complete without knowing its rows; a RunClosed of each version completes it', () => {
    const unknown = bookWith(
      comparison('c4', 'd1', 'base', 'cand', { dataset_id: undefined, confirmation_attempts: 0 }),
    );
    const trials = [...runOf('base', 'd1', ROWS), ...runOf('cand', 'd1', ROWS)] as TrialRecorded[];
    expect(decideComparison(unknown, unknown.comparisons.c4!, viewOf(trials), { producer: 'p' })).toEqual([]);
    const closed = (v: string) => ({
      event_id: `01KA${v === 'base' ? 'B' : 'C'}0000000000000000000000`,
      type: 'RunClosed' as const,
      schema_version: 1,
      occurred_at: 1,
      producer: 'p',
      run_id: `run-${v}`,
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: v,
      status: 'completed' as const,
      trials: 9,
      source_event_id: 'x',
    });
    const runs = [closed('base'), closed('cand')];
    expect(
      decideComparison(unknown, unknown.comparisons.c4!, viewOf(trials, [], runs), { producer: 'p' }),
    ).toMatchObject([{ type: 'GateEvaluated', verdict: 'pass' }]);
    expect(
      decideComparison(unknown, unknown.comparisons.c4!, viewOf(trials.slice(1), [], runs), { producer: 'p' }),
    ).toEqual([]);
    expect(
      decideComparison(unknown, unknown.comparisons.c4!, viewOf(trials, [], runs.slice(1)), { producer: 'p' }),
    ).toEqual([]);
  });

  it('counts a confirmed production failure in every later gate, even one on an older dataset version', () => {
    let ds: DatasetState | undefined;
    for (const e of [...ROWS.map((r) => datasetRow('d1', r)), failureConfirmed('t7')])
      ds = evolveDataset(ds, e, 'p').state;
    const book = bookWith(comparison('c3', 'd1', 'base', 'cand', { confirmation_attempts: 0 }));
    const trials = [...runOf('base', 'd1', ROWS), ...runOf('cand', 'd1', ROWS)] as TrialRecorded[];
    const [verdict] = decideComparison(book, book.comparisons.c3!, viewOf(trials, [ds!]), {
      producer: 'p',
    }) as GateEvaluated[];
    expect(verdict).toMatchObject({ verdict: 'fail' });
    expect(verdict!.reasons.find((r) => !r.passed)).toMatchObject({
      rule: 'must_not_break_classifiable',
      rows: ['refunds::pf-t7'],
    });
  });

  it('flags a second verdict on the same candidate (no gate shopping), and decides nothing twice', () => {
    const trials = [...runOf('base', 'd1', ROWS), ...runOf('cand', 'd1', ROWS)] as TrialRecorded[];
    let book = bookWith(
      comparison('first', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3 }),
      comparison('again', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3 }),
    );
    const [v1] = decideComparison(book, book.comparisons.first!, viewOf(trials), { producer: 'p' }) as GateEvaluated[];
    book = evolveBook(book, v1!);
    expect(v1!.repeated_verdict).toBeUndefined();
    expect(decideComparison(book, book.comparisons.first!, viewOf(trials), { producer: 'p' })).toEqual([]);
    const [v2] = decideComparison(book, book.comparisons.again!, viewOf(trials), { producer: 'p' }) as GateEvaluated[];
    expect(v2).toMatchObject({ repeated_verdict: true, gate_id: 'again' });
    // the verdict's own echo is not a repeat
    expect(evolveBook(book, v1!)).toBe(book);
  });

  describe('while the candidate runs adaptively (the sequential gate)', () => {
    const MNB = ['r1', 'r2'];
    const declared = comparison('c9', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3, must_not_break: MNB });
    const baseline = runOf('base', 'd1', ROWS) as TrialRecorded[];
    const adaptive = (k: number, fails: string[] = [], rows = ROWS) =>
      runOf('cand', 'd1', rows, { k, fails, run: 'adaptive-c9' }) as TrialRecorded[];
    const closedRun = {
      ...oneOfEach().RunClosed,
      run_id: 'adaptive-c9',
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: 'cand',
    };
    const round = {
      ...oneOfEach().AdaptiveRoundDecided,
      run_id: 'adaptive-c9',
      suite: 'refunds',
      dataset_version: 'd1',
      agent_version: 'cand',
    };
    const decide = (book = bookWith(declared), trials: TrialRecorded[], closed: RunClosed[] = []) =>
      decideComparison(book, book.comparisons.c9!, viewOf(trials, [], closed), { producer: 'p' });

    it('asks to confirm a failed must-not-break row before the run ends, and fails once it is confirmed', () => {
      // every row has 3 graded attempts: a fixed run would be complete; the adaptive one is still open
      const screening = [...baseline, ...adaptive(3, ['r2'])];
      const [request] = decide(undefined, screening);
      expect(request).toMatchObject({ type: 'ConfirmationRequested', rows: ['r2'], run_id: 'confirm-c9' });
      const confirming = evolveBook(bookWith(declared), request!);
      expect(decide(confirming, screening)).toEqual([]);
      const confirmation = [
        ...runOf('base', 'd1', ['r2'], { run: 'confirm-c9' }),
        ...runOf('cand', 'd1', ['r2'], { run: 'confirm-c9', fails: ['r2'] }),
      ].map((t) => ({
        ...t,
        event_id: `${t.event_id.slice(0, 20)}C${t.event_id.slice(21)}`,
        attempt: 3 + (t as TrialRecorded).attempt,
      })) as TrialRecorded[];
      const [verdict] = decide(confirming, [...screening, ...confirmation]) as GateEvaluated[];
      expect(verdict).toMatchObject({ type: 'GateEvaluated', verdict: 'fail' });
      expect(verdict!.must_not_break!.find((m) => m.row_id === 'r2')).toMatchObject({ status: 'broken' });
      // what it took, the confirmation attempts said apart (the run printed its own 9 only)
      const [costed] = decide(evolveBook(confirming, round), [...screening, ...confirmation]) as GateEvaluated[];
      expect(costed!.adaptive).toEqual({ attempts: 9 + 3, confirmations: 3, rows: 3, max_k: round.max_k });
    });

    it('passes only once every must-not-break row passed max-k attempts, not at min-attempts', () => {
      const fixed = [...baseline, ...runOf('cand', 'd1', ROWS)] as TrialRecorded[];
      expect(decide(undefined, fixed)).toMatchObject([{ verdict: 'pass' }]);
      // the same counts from an open adaptive run: r1 and r2 are not held yet (max-k 8 by default)
      expect(decide(undefined, [...baseline, ...adaptive(3)])).toEqual([]);
      const held = [...baseline, ...adaptive(8, [], MNB), ...adaptive(3, [], ['r3'])];
      expect(decide(undefined, held)).toMatchObject([{ type: 'GateEvaluated', verdict: 'pass' }]);
      // the run's rounds give its max-k: 4 passes hold a row of a run with --max-k 4
      const book = evolveBook(bookWith(declared), { ...round, max_k: 4 });
      expect(book.adaptive).toEqual({
        [candidateKey('refunds', 'cand')]: { 'adaptive-c9': { dataset_version: 'd1', max_k: 4 } },
      });
      const four = [...baseline, ...adaptive(4, [], MNB), ...adaptive(3, [], ['r3'])];
      // the verdict says what the decision took: 11 candidate attempts on 3 rows, against 3 rows × max-k 4
      expect(decide(book, four)).toMatchObject([{ verdict: 'pass', adaptive: { attempts: 11, rows: 3, max_k: 4 } }]);
      expect(decide(undefined, four)).toEqual([]);
    });

    it('leaves the decision to the run’s end when no row is must-not-break, or once the run is closed', () => {
      const none = bookWith(comparison('c9', 'd1', 'base', 'cand', { dataset_id: undefined, rows: 3 }));
      expect(decide(none, [...baseline, ...adaptive(3)])).toEqual([]);
      expect(decide(none, [...baseline, ...adaptive(3)], [{ ...closedRun, trials: 9 }])).toMatchObject([
        { verdict: 'pass' },
      ]);
      // closed: the fixed rule, r1 and r2 at 3 attempts are stable-correct
      expect(decide(undefined, [...baseline, ...adaptive(3)], [{ ...closedRun, trials: 9 }])).toMatchObject([
        { verdict: 'pass' },
      ]);
    });
  });
});
