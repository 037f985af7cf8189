import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import { baseName, sha256 } from '../importers/common.ts';
import { refuseUnknownFields } from '../files/fieldError.ts';

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One labeled row of a runner dataset (one JSON object per line). */
export const DatasetRow = z
  .object({
    id: z
      .union([z.string().min(1), z.number()])
      .transform(String)
      .optional(),
    row_id: z
      .union([z.string().min(1), z.number()])
      .transform(String)
      .optional(),
    /** What the agent gets: a string or any JSON value. */
    input: z.unknown(),
    /** The expected result (exact, regex pattern, judge reference); a JSON value is compared as JSON. */
    expected: z.unknown().optional(),
    tags: z.array(z.string().min(1)).optional(),
    /** Expected answers of intermediate checks, by check name: each reported check is graded against it. */
    expected_checks: z.record(z.string(), Scalar).optional(),
    /** A JSON Schema for this row's output (the json-schema grader). */
    expected_schema: z.record(z.string(), z.unknown()).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /** The published dataset the row came from (`passk dataset export` writes it): the file's default dataset id. */
    dataset_id: z.string().min(1).optional(),
  })
  .refine((r) => r.id !== undefined || r.row_id !== undefined, {
    message: 'every row needs an "id" (or "row_id")',
    path: ['id'],
  })
  .transform(({ row_id, id, ...rest }) => ({ ...rest, id: (id ?? row_id)! }));
export type DatasetRow = z.output<typeof DatasetRow>;

/**
 * The top-level fields a row may carry: DatasetRow's, and those `passk dataset export` writes besides (read back,
 * not used). Anything else is refused with the closest of them: a misspelt `tagz` would otherwise be dropped, and
 * the row lose its must-not-break tag. A row's own data goes under `metadata`.
 */
const ROW_FIELDS = [
  'id',
  'row_id',
  'input',
  'expected',
  'tags',
  'expected_checks',
  'expected_schema',
  'metadata',
  'dataset_id',
  'must_not_break',
  'dataset_version',
  'changed_in',
  'provenance',
] as const;

export interface Dataset {
  readonly file: string;
  /**
   * Default suite and dataset id: the dataset id every row names (an exported file), else the file name without
   * extension.
   */
  readonly name: string;
  /** Content-addressed: `sha-<12 hex>` of the file's bytes, so any edit makes a new version. */
  readonly version: string;
  readonly rows: readonly DatasetRow[];
}

export const parseDataset = (text: string, file: string): Dataset => {
  const rows: DatasetRow[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new InputError(`not valid JSON (${(e as Error).message})`, { file, line });
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      refuseUnknownFields(value, ROW_FIELDS, { file, line }, {}, 'a row\'s own data goes under "metadata"');
    const r = DatasetRow.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw new InputError(issue.message, { file, line, field: issue.path.map(String).join('.') || '(row)' });
    }
    const prior = seen.get(r.data.id);
    if (prior !== undefined)
      throw new InputError(`row id "${r.data.id}" already used on line ${prior}`, { file, line, field: 'id' });
    seen.set(r.data.id, line);
    rows.push(r.data);
  });
  if (rows.length === 0) throw new InputError('the dataset has no rows', { file });
  const ids = new Set(rows.map((r) => r.dataset_id));
  const named = ids.size === 1 ? [...ids][0] : undefined;
  return { file, name: named ?? baseName(file), version: `sha-${sha256(text).slice(0, 12)}`, rows };
};

export const readDataset = async (file: string): Promise<Dataset> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw unreadableFile(file, e, 'dataset file');
  }
  return parseDataset(text, file);
};

/** Rows' inputs and expected results as the strings a TrialRecorded carries. */
export const asText = (v: unknown): string | undefined =>
  v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
