import type { EventPublisher, EventSource } from '../../processors/ports.ts';
import { evolveDataset, rowsAt, type DatasetState } from '../../processors/folds/datasets.ts';
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
}

const sameRow = (a: PublishedRow, b: PublishedRow): boolean =>
  a.input === b.input &&
  a.expected === b.expected &&
  JSON.stringify([...a.tags].sort()) === JSON.stringify([...b.tags].sort());

export const publishedRowOf = (r: Dataset['rows'][number]): PublishedRow => ({
  input: asText(r.input) ?? '',
  expected: asText(r.expected) ?? null,
  tags: r.tags ?? [],
});

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
  /** Rows of the previous version the file no longer has: kept (passk.datasets has no removal event). */
  readonly removed: string[];
  readonly rows: number;
  readonly must_not_break_rows: number;
  readonly from_production: number;
}

/** Each version of a dataset, oldest first, with the rows it added and changed. */
export const versionChanges = (s: DatasetState): VersionChanges[] =>
  s.versions.map((v, i) => {
    const at = rowsAt(s, v);
    const before = i === 0 ? new Map() : rowsAt(s, s.versions[i - 1]);
    const added: string[] = [];
    const changed: string[] = [];
    for (const [id, r] of at) if (r.version_index === i) (before.has(id) ? changed : added).push(id);
    const rows = [...at.values()];
    return {
      dataset_version: v,
      added: added.sort(),
      changed: changed.sort(),
      removed: [],
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
  /** Rows of the latest version the file lacks (kept: there is no removal event). */
  readonly notInFile: string[];
  /** The version that already holds exactly these rows, when nothing is to be published. */
  readonly unchangedAs?: string;
}

/**
 * Plans a dataset version from a rows file: one DatasetRowUpserted per row added or changed since the
 * latest version. Re-publishing the same file plans nothing. A version id already used is refused
 * (versions are immutable); the default id is the file's content hash, the version `passk run` pins.
 */
export const planPublish = (
  state: DatasetState | undefined,
  dataset: Dataset,
  opts: { datasetId: string; version?: string; now: number; note?: string },
): PublishPlan => {
  const version = opts.version ?? dataset.version;
  const unchangedAs = matchingVersion(state, dataset);
  const latest = state ? rowsAt(state) : new Map();
  const fileIds = new Set(dataset.rows.map((r) => r.id));
  const notInFile = [...latest.keys()].filter((id) => !fileIds.has(id)).sort();
  const added: string[] = [];
  const changed: string[] = [];
  const events: DatasetRowUpserted[] = [];
  if (unchangedAs === undefined) {
    if (state?.versions.includes(version))
      throw new InputError(
        `dataset ${opts.datasetId} already has a version "${version}" with other rows; versions are immutable: pass a new --version`,
        { file: dataset.file, field: 'version' },
      );
    dataset.rows.forEach((r, i) => {
      const row = publishedRowOf(r);
      const prior = latest.get(r.id);
      if (prior && sameRow(prior, row)) return;
      (prior ? changed : added).push(r.id);
      events.push({
        event_id: deterministicEventId(opts.now, 'DatasetRowUpserted', opts.datasetId, version, r.id),
        type: 'DatasetRowUpserted',
        schema_version: 1,
        occurred_at: opts.now + i,
        producer: DATASET_PRODUCER,
        dataset_id: opts.datasetId,
        dataset_version: version,
        row_id: r.id,
        input: row.input,
        expected: row.expected,
        tags: [...row.tags],
        provenance: { kind: 'manual', note: opts.note ?? dataset.file },
      });
    });
  }
  if (unchangedAs === undefined && events.length === 0)
    throw new InputError(
      `the file only lacks rows of the latest version (${notInFile.slice(0, 5).join(', ')}); passk keeps rows once published (there is no removal event), so this is no new version`,
      { file: dataset.file },
    );
  return {
    datasetId: opts.datasetId,
    version: unchangedAs ?? version,
    events,
    added,
    changed,
    notInFile,
    ...(unchangedAs === undefined ? {} : { unchangedAs }),
  };
};

/** Publishes a plan's upserts (nothing when the file is already a version). */
export const publishPlan = async (publisher: EventPublisher, plan: PublishPlan): Promise<void> => {
  if (plan.events.length > 0) await publisher.publish(plan.events);
};
