import type { ComparisonDeclared } from '../../schemas/events/comparisons.ts';
import type { DatasetRowUpserted, FailureConfirmed } from '../../schemas/events/datasets.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { T0, trial } from './processorFixtures.ts';

/** The feedback loop's events: a dataset, a confirmed production failure, trials on its new version, a comparison. */
export const datasetRow = (version: string, row: string, tags: string[] = [], at = T0): DatasetRowUpserted => ({
  event_id: deterministicEventId(at, 'row', version, row),
  type: 'DatasetRowUpserted',
  schema_version: 1,
  occurred_at: at,
  producer: 'test',
  dataset_id: 'refunds-ds',
  dataset_version: version,
  row_id: row,
  input: `refund request ${row}`,
  expected: 'approve',
  tags,
  provenance: { kind: 'manual' },
});

export const failureConfirmed = (traceId: string, at = T0 + 10_000): FailureConfirmed => ({
  event_id: deterministicEventId(at, 'failure', traceId),
  type: 'FailureConfirmed',
  schema_version: 1,
  occurred_at: at,
  producer: 'review',
  trace_id: traceId,
  dataset_id: 'refunds-ds',
  input: 'refund for a damaged item, 40 days after purchase',
  expected: 'deny',
  reviewer: 'alice',
});

export const comparison = (
  id: string,
  version: string,
  baseline: string,
  candidate: string,
  over: Partial<ComparisonDeclared> = {},
): ComparisonDeclared => ({
  event_id: deterministicEventId(T0 + 50_000, 'comparison', id),
  type: 'ComparisonDeclared',
  schema_version: 1,
  occurred_at: T0 + 50_000,
  producer: 'test',
  comparison_id: id,
  suite: 'refunds',
  dataset_id: 'refunds-ds',
  dataset_version: version,
  baseline,
  candidate,
  ...over,
});

/** k attempts of `version` on every row, passing except where `fails` says. */
export const runOf = (
  version: string,
  datasetVersion: string,
  rows: readonly string[],
  opts: { k?: number; fails?: readonly string[]; run?: string } = {},
): PasskEvent[] =>
  rows.flatMap((row) =>
    Array.from({ length: opts.k ?? 3 }, (_, a) =>
      trial({
        row,
        version,
        dataset_version: datasetVersion,
        run: opts.run ?? `run-${version}`,
        attempt: a,
        passed: !(opts.fails ?? []).includes(row),
        output: 'x',
        at: T0 + 20_000 + a,
      }),
    ),
  );
