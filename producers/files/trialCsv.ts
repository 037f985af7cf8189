import { InputError } from '../../schemas/errors.ts';
import type { Origin, ReadOptions } from './fieldError.ts';
import { type CsvRecord, parseCsv } from './csv.ts';
import { parseTrialRecord, type ReadTrial } from './trialLines.ts';

/**
 * The flat trial format as CSV: a header row naming FlatTrial fields. Empty cells are absent.
 * passed: true/false/1/0, or empty or "null" for ungraded. Numbers: attempt, occurred_at, score,
 * cost_usd, latency_ms. tags: separated by ";". checks, actions, tokens, forbidden_actions,
 * retrieved_refs, grader: JSON in the cell.
 */
const NUMBER_FIELDS = new Set(['attempt', 'occurred_at', 'score', 'cost_usd', 'latency_ms']);
const JSON_FIELDS = new Set(['checks', 'actions', 'tokens', 'forbidden_actions', 'retrieved_refs', 'grader']);

const parsePassed = (cell: string, origin: Origin): boolean | null => {
  const v = cell.trim().toLowerCase();
  if (v === '' || v === 'null') return null;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InputError(`expected true, false or empty, found "${cell}"`, { ...origin, field: 'passed' });
};

const cellValue = (name: string, cell: string, origin: Origin): unknown => {
  if (name === 'passed') return parsePassed(cell, origin);
  if (cell === '') return undefined;
  if (NUMBER_FIELDS.has(name)) {
    const n = Number(cell);
    if (cell.trim() === '' || !Number.isFinite(n))
      throw new InputError(`expected a number, found "${cell}"`, { ...origin, field: name });
    return n;
  }
  if (name === 'tags')
    return cell
      .split(';')
      .map((t) => t.trim())
      .filter(Boolean);
  if (JSON_FIELDS.has(name))
    try {
      return JSON.parse(cell);
    } catch {
      throw new InputError('expected JSON in this cell', { ...origin, field: name });
    }
  return cell;
};

/** One CSV record (header-keyed) as a trial. */
export const csvRecordTrial = ({ line, fields }: CsvRecord, file: string, opts: ReadOptions = {}): ReadTrial => {
  const origin = { file, line };
  const value = Object.fromEntries(
    Object.entries(fields)
      .map(([k, v]) => [k, cellValue(k, v, origin)])
      .filter(([, v]) => v !== undefined),
  );
  if (!('passed' in fields)) throw new InputError('missing column', { ...origin, field: 'passed' });
  return { event: parseTrialRecord(value, origin, opts), origin };
};

export const parseTrialCsv = (text: string, file: string, opts: ReadOptions = {}): ReadTrial[] =>
  parseCsv(text, file).map((r) => csvRecordTrial(r, file, opts));
