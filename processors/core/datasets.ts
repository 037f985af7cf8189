import { z } from 'zod';
import {
  ExpectedChecks,
  Provenance,
  type DatasetRowUpserted,
  type FailureConfirmed,
} from '../../schemas/events/datasets.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { MUST_NOT_BREAK_TAG } from './mustNotBreak.ts';

/**
 * Datasets as a fold of passk.datasets: versions in order of first appearance, and each row's
 * history across versions. The rows of version i are, for every row, its latest entry at or
 * before i, unless that entry is a removal (a tombstone: `removed`). A `FailureConfirmed` decides a `DatasetRowUpserted` (decide/evolve, as in Emmett):
 * a must-not-break row holding the input, the reviewer's expected result and the trace link, in a
 * new version. The decided event is applied at once and its echo from the log is a duplicate, so a
 * replay of the topic from its start rebuilds the same state and decides the same events.
 */
export const DatasetRow = z.object({
  version_index: z.number().int().nonnegative(),
  event_id: z.string(),
  input: z.string(),
  expected: z.string().nullable(),
  tags: z.array(z.string()),
  provenance: Provenance,
  expected_checks: ExpectedChecks.optional(),
  /** A tombstone: the row is not in this version (nor later ones, until upserted again). */
  removed: z.boolean().optional(),
  /** Fields whose text is JSON of a non-string value (DatasetRowUpserted.json_fields). */
  json_fields: z.array(z.enum(['input', 'expected'])).optional(),
});
export type DatasetRow = z.infer<typeof DatasetRow>;

export const DatasetState = z.object({
  dataset_id: z.string(),
  versions: z.array(z.string()),
  /** row id → its entries, in version order. */
  rows: z.record(z.string(), z.array(DatasetRow)),
  /** Event ids folded so far (de-duplication). */
  seen: z.array(z.string()),
});
export type DatasetState = z.infer<typeof DatasetState>;

export type DatasetEvent = DatasetRowUpserted | FailureConfirmed;

const empty = (dataset_id: string): DatasetState => ({ dataset_id, versions: [], rows: {}, seen: [] });

/** The version a confirmed failure lands in: `<latest>.pf<n+1>` after `<base>.pf<n>`, else `<latest>.pf1`. */
export const nextFailureVersion = (versions: readonly string[]): string => {
  const latest = versions.at(-1);
  if (latest === undefined) return 'pf1';
  const m = /^(.*)\.pf(\d+)$/.exec(latest);
  return m ? `${m[1]}.pf${Number(m[2]) + 1}` : `${latest}.pf1`;
};

export const failureRowId = (traceId: string): string => `pf-${traceId}`;

/** The must-not-break row a confirmed production failure becomes (pure: same failure and state, same event). */
export const decideFailure = (state: DatasetState, f: FailureConfirmed, producer: string): DatasetRowUpserted => ({
  event_id: deterministicEventId(f.occurred_at, 'DatasetRowUpserted', f.event_id),
  type: 'DatasetRowUpserted',
  schema_version: 1,
  occurred_at: f.occurred_at,
  producer,
  dataset_id: f.dataset_id,
  dataset_version: nextFailureVersion(state.versions),
  row_id: failureRowId(f.trace_id),
  input: f.input,
  expected: f.expected,
  tags: [MUST_NOT_BREAK_TAG, 'production_failure'],
  provenance: {
    kind: 'production_failure',
    trace_id: f.trace_id,
    failure_event_id: f.event_id,
    ...(f.note ? { note: f.note } : {}),
  },
});

const upsert = (s: DatasetState, e: DatasetRowUpserted): DatasetState => {
  const known = s.versions.indexOf(e.dataset_version);
  const versions = known >= 0 ? s.versions : [...s.versions, e.dataset_version];
  const version_index = known >= 0 ? known : versions.length - 1;
  const entry: DatasetRow = {
    version_index,
    event_id: e.event_id,
    input: e.input,
    expected: e.expected,
    tags: [...e.tags],
    provenance: e.provenance,
    ...(e.expected_checks ? { expected_checks: { ...e.expected_checks } } : {}),
    ...(e.removed ? { removed: true } : {}),
    ...(e.json_fields?.length ? { json_fields: [...e.json_fields] } : {}),
  };
  const history = [...(s.rows[e.row_id] ?? []), entry].sort(
    (a, b) => a.version_index - b.version_index || (a.event_id < b.event_id ? -1 : 1),
  );
  return { ...s, versions, rows: { ...s.rows, [e.row_id]: history }, seen: [...s.seen, e.event_id] };
};

/** Folds one event; returns the new state and what it decided to emit (a failure's new row). */
export const evolveDataset = (
  state: DatasetState | undefined,
  e: DatasetEvent,
  producer: string,
): { state: DatasetState; emitted: DatasetRowUpserted[] } => {
  const s = state ?? empty(e.dataset_id);
  if (s.seen.includes(e.event_id)) return { state: s, emitted: [] };
  if (e.type === 'DatasetRowUpserted') return { state: upsert(s, e), emitted: [] };
  const marked = { ...s, seen: [...s.seen, e.event_id] };
  const row = decideFailure(s, e, producer);
  return marked.seen.includes(row.event_id)
    ? { state: marked, emitted: [] }
    : { state: upsert(marked, row), emitted: [row] };
};

/** The rows of a version (undefined: the latest), keyed by row id; a row removed at or before it is not there. */
export const rowsAt = (s: DatasetState, version?: string): Map<string, DatasetRow> => {
  const index = version === undefined ? s.versions.length - 1 : s.versions.indexOf(version);
  const out = new Map<string, DatasetRow>();
  if (index < 0) return out;
  for (const [id, history] of Object.entries(s.rows)) {
    const entry = history.filter((h) => h.version_index <= index).at(-1);
    if (entry && !entry.removed) out.set(id, entry);
  }
  return out;
};

export const mustNotBreakAt = (s: DatasetState, version?: string): string[] =>
  [...rowsAt(s, version)]
    .filter(([, r]) => r.tags.includes(MUST_NOT_BREAK_TAG))
    .map(([id]) => id)
    .sort();
