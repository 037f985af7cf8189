import { describe, expect, it } from 'vitest';
import { evolveDataset, type DatasetState } from '../../processors/folds/datasets.ts';
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
});
