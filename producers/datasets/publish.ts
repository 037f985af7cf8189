import type { EventPublisher, EventSource } from '../../processors/ports.ts';
import { evolveDataset, rowsAt, type DatasetRow, type DatasetState } from '../../processors/core/datasets.ts';
import type { DatasetRowUpserted } from '../../schemas/events/datasets.ts';
import { InputError } from '../../schemas/errors.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { readLog } from '../logReader.ts';
import { asText, type Dataset } from '../runner/dataset.ts';
import { PRODUCER_VERSION } from '../version.ts';

export const DATASET_PRODUCER = `passk-dataset/${PRODUCER_VERSION}`;

/** A row as passk.datasets holds it: what a DatasetRowUpserted carries of a runner dataset row. */
export interface PublishedRow {
  readonly input: string;
  readonly expected: string | null;
  readonly tags: readonly string[];
  readonly expected_checks?: Readonly<Record<string, string | number | boolean | null>>;
  /** Fields whose text is JSON of a non-string value: written back as that value by `dataset export`. */
  readonly json_fields?: readonly ('input' | 'expected')[];
}

const sortedEntries = (o: object | undefined): [string, unknown][] =>
  Object.entries(o ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const sameRow = (a: PublishedRow, b: PublishedRow): boolean =>
  a.input === b.input &&
  a.expected === b.expected &&
  JSON.stringify([...a.tags].sort()) === JSON.stringify([...b.tags].sort()) &&
  JSON.stringify(sortedEntries(a.expected_checks)) === JSON.stringify(sortedEntries(b.expected_checks));

export const publishedRowOf = (r: Dataset['rows'][number]): PublishedRow => {
  const json = (['input', 'expected'] as const).filter((f) => r[f] !== undefined && typeof r[f] !== 'string');
  return {
    input: asText(r.input) ?? '',
    expected: asText(r.expected) ?? null,
    tags: r.tags ?? [],
    ...(r.expected_checks && Object.keys(r.expected_checks).length ? { expected_checks: r.expected_checks } : {}),
    ...(json.length ? { json_fields: json } : {}),
  };
};

/** Every dataset on passk.datasets now, folded as the dataset processor folds them. */
export const readDatasets = async (source: EventSource): Promise<Map<string, DatasetState>> => {
  const states = new Map<string, DatasetState>();
  await readLog(source, { topics: [TOPICS.datasets] }, ({ event: e }) => {
    if (e.type !== 'DatasetRowUpserted' && e.type !== 'FailureConfirmed') return;
    states.set(e.dataset_id, evolveDataset(states.get(e.dataset_id), e, DATASET_PRODUCER).state);
  });
  return states;
};

/** What one version did to the version before it. */
export interface VersionChanges {
  readonly dataset_version: string;
  readonly added: string[];
  readonly changed: string[];
  /** Rows of the previous version this version removed (tombstones). */
  readonly removed: string[];
  readonly rows: number;
  readonly must_not_break_rows: number;
  readonly from_production: number;
}

/** Each version of a dataset, oldest first, with the rows it added, changed and removed. */
export const versionChanges = (s: DatasetState): VersionChanges[] =>
  s.versions.map((v, i) => {
    const at = rowsAt(s, v);
    const before = i === 0 ? new Map() : rowsAt(s, s.versions[i - 1]);
    const added: string[] = [];
    const changed: string[] = [];
    for (const [id, r] of at) if (r.version_index === i) (before.has(id) ? changed : added).push(id);
    const removed = [...before.keys()].filter((id) => !at.has(id));
    const rows = [...at.values()];
    return {
      dataset_version: v,
      added: added.sort(),
      changed: changed.sort(),
      removed: removed.sort(),
      rows: rows.length,
      must_not_break_rows: rows.filter((r) => r.tags.includes('must_not_break')).length,
      from_production: rows.filter((r) => r.provenance.kind === 'production_failure').length,
    };
  });

/** The published version whose rows are exactly the file's rows (the latest such), if any. */
export const matchingVersion = (s: DatasetState | undefined, dataset: Dataset): string | undefined => {
  if (!s) return undefined;
  for (const v of [...s.versions].reverse()) {
    const at = rowsAt(s, v);
    if (
      at.size === dataset.rows.length &&
      dataset.rows.every((r) => {
        const p = at.get(r.id);
        return p !== undefined && sameRow(p, publishedRowOf(r));
      })
    )
      return v;
  }
  return undefined;
};

export interface PublishPlan {
  readonly datasetId: string;
  readonly version: string;
  /** The upserts to publish: rows added or changed against the latest version (none when nothing changed). */
  readonly events: DatasetRowUpserted[];
  readonly added: string[];
  readonly changed: string[];
  /** Rows of the latest version the file lacks: removed in the new version (one tombstone each). */
  readonly removed: string[];
  /** Rows of the latest version the file lacks that came from confirmed production failures: kept. */
  readonly keptFromProduction: string[];
  /** The version that already holds exactly these rows, when nothing is to be published. */
  readonly unchangedAs?: string;
}

/**
 * Plans a dataset version from a rows file: one DatasetRowUpserted per row added or changed since the
 * latest version, and a tombstone (`removed: true`) per row of the latest version the file lacks, except
 * rows that came from confirmed production failures (passk review adds those; a file never drops them).
 * Re-publishing the same file plans nothing. A version id already used is refused
 * (versions are immutable); the default id is the file's content hash, the version `passk run` pins.
 */
export const planPublish = (
  state: DatasetState | undefined,
  dataset: Dataset,
  opts: {
    datasetId: string;
    version?: string;
    now: number;
    note?: string;
    /** Rows from confirmed production failures to remove as well (a file alone never drops them). */
    removeFromProduction?: readonly string[];
  },
): PublishPlan => {
  const latest = state ? rowsAt(state) : new Map<string, DatasetRow>();
  const fileIds = new Set(dataset.rows.map((r) => r.id));
  const missing = [...latest].filter(([id]) => !fileIds.has(id));
  const toRemove = new Set(opts.removeFromProduction ?? []);
  for (const id of toRemove) {
    const row = latest.get(id);
    if (row?.provenance.kind !== 'production_failure' || fileIds.has(id))
      throw new InputError(
        row === undefined
          ? `--remove ${id}: dataset ${opts.datasetId} has no row "${id}" in its latest version`
          : fileIds.has(id)
            ? `--remove ${id}: the file holds that row; leave it out of the file, or do not remove it`
            : `--remove ${id}: that row is not from a confirmed production failure; a row from a file is removed by leaving it out of the file`,
        { file: dataset.file, field: '--remove' },
      );
  }
  const fromProduction = ([id, r]: [string, DatasetRow]) =>
    r.provenance.kind === 'production_failure' && !toRemove.has(id);
  const matching = matchingVersion(state, dataset);
  const unchangedAs = toRemove.size > 0 ? undefined : matching;
  // a removal can bring the rows back to a version already published (v1 + a pf row, less that row, is v1's rows):
  // the new version is then `<that version, or the file hash>.rm<k>`
  const removalVersion = () => {
    const base = matching ?? dataset.version;
    let k = 1;
    while (state?.versions.includes(`${base}.rm${k}`)) k++;
    return `${base}.rm${k}`;
  };
  const version = opts.version ?? (toRemove.size > 0 ? removalVersion() : dataset.version);
  const keptFromProduction = missing
    .filter(fromProduction)
    .map(([id]) => id)
    .sort();
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  const events: DatasetRowUpserted[] = [];
  const event = (
    rowId: string,
    i: number,
    row: PublishedRow,
    extra: Partial<DatasetRowUpserted>,
  ): DatasetRowUpserted => ({
    event_id: deterministicEventId(opts.now, 'DatasetRowUpserted', opts.datasetId, version, rowId),
    type: 'DatasetRowUpserted',
    schema_version: 2,
    occurred_at: opts.now + i,
    producer: DATASET_PRODUCER,
    dataset_id: opts.datasetId,
    dataset_version: version,
    row_id: rowId,
    input: row.input,
    expected: row.expected,
    tags: [...row.tags],
    provenance: { kind: 'manual', note: opts.note ?? dataset.file },
    ...(row.expected_checks ? { expected_checks: { ...row.expected_checks } } : {}),
    ...(row.json_fields?.length ? { json_fields: [...row.json_fields] } : {}),
    ...extra,
  });
  if (unchangedAs === undefined) {
    dataset.rows.forEach((r, i) => {
      const row = publishedRowOf(r);
      const prior = latest.get(r.id);
      if (prior && sameRow(prior, row)) return;
      (prior ? changed : added).push(r.id);
      events.push(event(r.id, i, row, {}));
    });
    for (const [id, prior] of missing.filter((m) => !fromProduction(m)).sort(([a], [b]) => (a < b ? -1 : 1))) {
      removed.push(id);
      events.push(event(id, dataset.rows.length + removed.length, prior, { removed: true }));
    }
    if (events.length > 0 && state?.versions.includes(version))
      throw new InputError(
        `dataset ${opts.datasetId} already has a version "${version}" with other rows; versions are immutable: pass a new --version`,
        { file: dataset.file, field: 'version' },
      );
  }
  // Nothing to publish: the file is a version already (or the latest one less rows from production, kept).
  const same = unchangedAs ?? (events.length === 0 ? state?.versions.at(-1) : undefined);
  return {
    datasetId: opts.datasetId,
    version: same ?? version,
    events,
    added,
    changed,
    removed,
    keptFromProduction,
    ...(same === undefined ? {} : { unchangedAs: same }),
  };
};

/** Publishes a plan's upserts (nothing when the file is already a version). */
export const publishPlan = async (publisher: EventPublisher, plan: PublishPlan): Promise<void> => {
  if (plan.events.length > 0) await publisher.publish(plan.events);
};
