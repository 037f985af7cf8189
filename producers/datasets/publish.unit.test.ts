import { describe, expect, it } from 'vitest';
import { evolveDataset, rowsAt, type DatasetState } from '../../processors/core/datasets.ts';
import { parseDataset } from '../runner/dataset.ts';
import { matchingVersion, planPublish, versionChanges, DATASET_PRODUCER } from './publish.ts';

const file = (rows: object[]) => parseDataset(rows.map((r) => JSON.stringify(r)).join('\n'), 'refunds.jsonl');
const v1 = file([
  { id: 'a', input: 'x', expected: 'approve', tags: ['must_not_break'] },
  { id: 'b', input: 'y', expected: 'deny' },
]);
const apply = (state: DatasetState | undefined, events: readonly Parameters<typeof evolveDataset>[1][]) =>
  events.reduce<DatasetState | undefined>((s, e) => evolveDataset(s, e, DATASET_PRODUCER).state, state);

describe('planPublish', () => {
  it('publishes every row of a new dataset, then nothing for the same file', () => {
    const first = planPublish(undefined, v1, { datasetId: 'refunds', now: 1_000 });
    expect(first).toMatchObject({ version: v1.version, added: ['a', 'b'], changed: [] });
    expect(first.events).toHaveLength(2);
    const state = apply(undefined, first.events);
    const again = planPublish(state, v1, { datasetId: 'refunds', now: 2_000 });
    expect(again.events).toEqual([]);
    expect(again.unchangedAs).toBe(v1.version);
    expect(matchingVersion(state, v1)).toBe(v1.version);
  });

  it('publishes only the rows that changed, as a new version; versions shows added and changed', () => {
    const state = apply(undefined, planPublish(undefined, v1, { datasetId: 'refunds', now: 1_000 }).events);
    const v2 = file([
      { id: 'a', input: 'x', expected: 'approve', tags: ['must_not_break'] },
      { id: 'b', input: 'y', expected: 'approve' },
      { id: 'c', input: 'z', expected: 'deny', tags: ['must_not_break'] },
    ]);
    const plan = planPublish(state, v2, { datasetId: 'refunds', version: 'v2', now: 2_000 });
    expect(plan).toMatchObject({ version: 'v2', added: ['c'], changed: ['b'] });
    expect(plan.events.map((e) => e.row_id)).toEqual(['b', 'c']);
    const after = apply(state, plan.events)!;
    expect(versionChanges(after)).toEqual([
      expect.objectContaining({
        dataset_version: v1.version,
        added: ['a', 'b'],
        changed: [],
        rows: 2,
        must_not_break_rows: 1,
      }),
      expect.objectContaining({ dataset_version: 'v2', added: ['c'], changed: ['b'], rows: 3, must_not_break_rows: 2 }),
    ]);
  });

  it('refuses a version id already used with other rows, naming the file and the field', () => {
    const state = apply(
      undefined,
      planPublish(undefined, v1, { datasetId: 'refunds', version: 'v1', now: 1_000 }).events,
    );
    const changed = file([{ id: 'a', input: 'other', expected: 'approve' }]);
    expect(() => planPublish(state, changed, { datasetId: 'refunds', version: 'v1', now: 2_000 })).toThrow(
      /already has a version "v1"/,
    );
  });

  it('a file that only drops rows publishes a new version with one tombstone per dropped row', () => {
    const three = file([
      { id: 'a', input: 'x', expected: 'approve', tags: ['must_not_break'] },
      { id: 'b', input: 'y', expected: 'deny' },
      { id: 'c', input: 'z', expected: 'deny' },
    ]);
    const state = apply(
      undefined,
      planPublish(undefined, three, { datasetId: 'refunds', version: 'v1', now: 1_000 }).events,
    );
    const dropped = file([{ id: 'a', input: 'x', expected: 'approve', tags: ['must_not_break'] }]);
    const plan = planPublish(state, dropped, { datasetId: 'refunds', version: 'v2', now: 2_000 });
    expect(plan).toMatchObject({ version: 'v2', added: [], changed: [], removed: ['b', 'c'] });
    expect(plan.events.map((e) => [e.row_id, e.removed, e.input])).toEqual([
      ['b', true, 'y'],
      ['c', true, 'z'],
    ]);
    const after = apply(state, plan.events)!;
    expect(versionChanges(after).map((v) => [v.dataset_version, v.added, v.changed, v.removed, v.rows])).toEqual([
      ['v1', ['a', 'b', 'c'], [], [], 3],
      ['v2', [], [], ['b', 'c'], 1],
    ]);
    // run --dataset pins v2 for the smaller file, v1 for the first one; publishing either again does nothing
    expect(matchingVersion(after, dropped)).toBe('v2');
    expect(matchingVersion(after, three)).toBe('v1');
    expect(planPublish(after, dropped, { datasetId: 'refunds', now: 3_000 })).toMatchObject({
      events: [],
      unchangedAs: 'v2',
    });
    // a dropped row that comes back is added again (the file as a whole is no earlier version)
    const readd = file([three.rows[0]!, three.rows[1]!]);
    const readded = planPublish(after, readd, { datasetId: 'refunds', version: 'v3', now: 4_000 });
    expect(readded).toMatchObject({ added: ['b'], changed: [], removed: [] });
    expect(versionChanges(apply(after, readded.events)!).at(-1)).toMatchObject({ added: ['b'], removed: [], rows: 2 });
  });

  it('keeps the rows confirmed production failures added when a file lacks them', () => {
    const state = apply(
      undefined,
      planPublish(undefined, v1, { datasetId: 'refunds', version: 'v1', now: 1_000 }).events,
    );
    const withFailure = evolveDataset(
      state,
      {
        event_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
        type: 'FailureConfirmed',
        schema_version: 1,
        occurred_at: 1_500,
        producer: 'review',
        trace_id: 't-1',
        dataset_id: 'refunds',
        input: 'late refund',
        expected: 'deny',
        reviewer: 'alice',
      },
      DATASET_PRODUCER,
    ).state;
    const again = planPublish(withFailure, v1, { datasetId: 'refunds', version: 'v2', now: 2_000 });
    expect(again).toMatchObject({ events: [], removed: [], keptFromProduction: ['pf-t-1'], unchangedAs: 'v1' });
    const dropB = planPublish(withFailure, file([v1.rows[0]!]), { datasetId: 'refunds', version: 'v2', now: 2_000 });
    expect(dropB).toMatchObject({ removed: ['b'], keptFromProduction: ['pf-t-1'] });
    // removed only when asked by id, in a version of its own
    const rm = planPublish(withFailure, v1, { datasetId: 'refunds', now: 2_000, removeFromProduction: ['pf-t-1'] });
    expect(rm).toMatchObject({ removed: ['pf-t-1'], keptFromProduction: [], version: 'v1.rm1' });
    expect(rm.events.map((e) => [e.row_id, e.removed])).toEqual([['pf-t-1', true]]);
    expect([...rowsAt(apply(withFailure, rm.events)!).keys()].sort()).toEqual(v1.rows.map((r) => r.id).sort());
    for (const [id, why] of [
      ['nope', /no row "nope"/],
      ['b', /not from a confirmed production failure/],
    ] as const)
      expect(() =>
        planPublish(withFailure, file([v1.rows[0]!]), { datasetId: 'refunds', now: 2_000, removeFromProduction: [id] }),
      ).toThrow(why);
  });

  it('carries expected checks, and a change to them alone is a changed row', () => {
    const withChecks = file([
      { id: 'a', input: 'x', expected: 'approve', expected_checks: { window: true, receipt: 'r-1' } },
    ]);
    const first = planPublish(undefined, withChecks, { datasetId: 'refunds', version: 'v1', now: 1_000 });
    expect(first.events[0]?.expected_checks).toEqual({ window: true, receipt: 'r-1' });
    const state = apply(undefined, first.events);
    const reordered = file([
      { id: 'a', input: 'x', expected: 'approve', expected_checks: { receipt: 'r-1', window: true } },
    ]);
    expect(planPublish(state, reordered, { datasetId: 'refunds', now: 2_000 }).events).toEqual([]);
    const other = file([
      { id: 'a', input: 'x', expected: 'approve', expected_checks: { window: false, receipt: 'r-1' } },
    ]);
    expect(planPublish(state, other, { datasetId: 'refunds', version: 'v2', now: 2_000 })).toMatchObject({
      changed: ['a'],
      events: [expect.objectContaining({ expected_checks: { window: false, receipt: 'r-1' } })],
    });
  });
});

describe('a dataset row', () => {
  it('with a misspelt field is refused, naming file, line, field and the closest field, before any publish', () => {
    const rows = [
      { id: 'a', input: 'x', expected: 'approve' },
      { id: 'b', input: 'y', expected: 'deny', tagz: ['must_not_break'] },
    ];
    expect(() => file(rows)).toThrow(
      'refunds.jsonl, line 2, field tagz: unknown field "tagz" (did you mean "tags"?); a row\'s own data goes under "metadata"',
    );
  });

  it('may carry what passk dataset export writes, and metadata', () => {
    const exported = {
      id: 'a',
      input: 'x',
      expected: 'approve',
      tags: ['must_not_break'],
      must_not_break: true,
      dataset_id: 'refunds',
      dataset_version: 'v1',
      changed_in: 'v1',
      provenance: { source: 'file' },
      metadata: { ticket: 12 },
    };
    expect(file([exported]).rows[0]?.tags).toEqual(['must_not_break']);
  });
});
