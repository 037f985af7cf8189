import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideFailure,
  DatasetState,
  evolveDataset,
  failureRowId,
  mustNotBreakAt,
  nextFailureVersion,
  rowsAt,
  type DatasetEvent,
} from '../../processors/core/datasets.ts';
import { datasetRow, failureConfirmed } from '../helpers/feedbackLoop.ts';

const fold = (events: readonly DatasetEvent[], from?: DatasetState) => {
  let s = from;
  const emitted = [];
  for (const e of events) {
    const step = evolveDataset(s, e, 'p');
    s = step.state;
    emitted.push(...step.emitted);
  }
  return { state: s!, emitted };
};

describe('datasets fold', () => {
  it('folds rows into versions; a later version keeps the rows it did not change', () => {
    const { state } = fold([
      datasetRow('v1', 'r1', ['must_not_break']),
      datasetRow('v1', 'r2'),
      datasetRow('v2', 'r2', ['must_not_break']),
    ]);
    expect(state.versions).toEqual(['v1', 'v2']);
    expect([...rowsAt(state, 'v1').keys()].sort()).toEqual(['r1', 'r2']);
    expect(mustNotBreakAt(state, 'v1')).toEqual(['r1']);
    expect(mustNotBreakAt(state)).toEqual(['r1', 'r2']);
  });

  it('a removal (tombstone) drops the row from its version and later ones, until the row is upserted again', () => {
    const gone = { ...datasetRow('v2', 'r2', ['must_not_break']), removed: true };
    const back = datasetRow('v3', 'r2', ['must_not_break'], 5);
    const { state } = fold([datasetRow('v1', 'r1'), datasetRow('v1', 'r2', ['must_not_break']), gone, back]);
    expect(state.versions).toEqual(['v1', 'v2', 'v3']);
    expect([...rowsAt(state, 'v1').keys()].sort()).toEqual(['r1', 'r2']);
    expect([...rowsAt(state, 'v2').keys()]).toEqual(['r1']);
    expect(mustNotBreakAt(state, 'v2')).toEqual([]);
    expect([...rowsAt(state, 'v3').keys()].sort()).toEqual(['r1', 'r2']);
    expect(mustNotBreakAt(state)).toEqual(['r2']);
    // a redelivered tombstone changes nothing
    expect(fold([gone], state).state).toEqual(state);
  });

  it("keeps a row's expected checks with its entry", () => {
    const row = { ...datasetRow('v1', 'r1'), expected_checks: { window: true, receipt: 'kept' } };
    expect(rowsAt(fold([row]).state).get('r1')?.expected_checks).toEqual({ window: true, receipt: 'kept' });
  });

  it('turns a confirmed failure into a must-not-break row in a new version, with the trace link', () => {
    const f = failureConfirmed('t-9');
    const { state, emitted } = fold([datasetRow('v1', 'r1'), f]);
    expect(emitted).toHaveLength(1);
    expect(emitted[0]).toMatchObject({
      dataset_version: 'v1.pf1',
      row_id: failureRowId('t-9'),
      input: f.input,
      expected: 'deny',
      tags: ['must_not_break', 'production_failure'],
      provenance: { kind: 'production_failure', trace_id: 't-9', failure_event_id: f.event_id },
    });
    expect(state.versions).toEqual(['v1', 'v1.pf1']);
    expect(mustNotBreakAt(state)).toEqual([failureRowId('t-9')]);
    expect([...rowsAt(state).keys()].sort()).toEqual([failureRowId('t-9'), 'r1']);
  });

  it('decides the same row again on a redelivered failure, and ignores the echo of its own row', () => {
    const f = failureConfirmed('t-1');
    const first = fold([datasetRow('v1', 'r1'), f]);
    const echo = fold([first.emitted[0]!, f], first.state);
    expect(echo.emitted).toEqual([]);
    expect(echo.state).toEqual(first.state);
    const replay = fold([datasetRow('v1', 'r1'), f, first.emitted[0]!]);
    expect(replay.emitted).toEqual(first.emitted);
    expect(replay.state).toEqual(first.state);
  });

  it('numbers failure versions', () => {
    expect(nextFailureVersion([])).toBe('pf1');
    expect(nextFailureVersion(['2026-11'])).toBe('2026-11.pf1');
    expect(nextFailureVersion(['2026-11', '2026-11.pf1'])).toBe('2026-11.pf2');
    expect(decideFailure(fold([datasetRow('a', 'r')]).state, failureConfirmed('t'), 'p').dataset_version).toBe('a.pf1');
  });

  it('checkpoint, restore, continue = one straight replay, for any split point', () => {
    const events: DatasetEvent[] = [
      datasetRow('v1', 'r1'),
      datasetRow('v1', 'r2', ['must_not_break']),
      failureConfirmed('t1'),
      datasetRow('v2', 'r1'),
      failureConfirmed('t2'),
      failureConfirmed('t1'),
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...events), { maxLength: 12 }), fc.nat(), (stream, cut) => {
        const i = cut % (stream.length + 1);
        const head =
          stream.length === 0 || i === 0
            ? undefined
            : DatasetState.parse(JSON.parse(JSON.stringify(fold(stream.slice(0, i)).state)));
        const tail = fold(stream.slice(i), head);
        const straight = fold(stream);
        if (stream.length > 0) expect(JSON.stringify(tail.state)).toBe(JSON.stringify(straight.state));
        else expect(tail.state).toBeUndefined();
      }),
    );
  });
});
