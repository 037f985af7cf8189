import { readFile } from 'node:fs/promises';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import type { ReadOptions } from './fieldError.ts';
import { streamCsv } from './csv.ts';
import { csvRecordTrial, parseTrialCsv } from './trialCsv.ts';
import { parseTrialLines, type ReadTrial } from './trialLines.ts';

export type TrialFiles = {
  trials: TrialRecorded[];
  /** Per file: trials read, and lines that repeated an attempt already read (same event id, same content). */
  files: { file: string; trials: number; duplicates: number }[];
};

const isCsv = (file: string): boolean => file.toLowerCase().endsWith('.csv');

/** Reads one file's text: `.csv` as CSV, anything else as JSON lines. */
export const parseTrialText = (text: string, file: string, opts: ReadOptions = {}): ReadTrial[] =>
  isCsv(file) ? parseTrialCsv(text, file, opts) : parseTrialLines(text, file, opts);

/** A CSV file's trials, its records streamed from disk (csv-parse): memory holds the trials, never the text. */
const readCsvTrials = async (file: string, opts: ReadOptions): Promise<ReadTrial[]> => {
  const out: ReadTrial[] = [];
  for await (const r of streamCsv(file)) out.push(csvRecordTrial(r, file, opts));
  return out;
};

const firstDifference = (a: TrialRecorded, b: TrialRecorded): string => {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  const get = (e: TrialRecorded, k: string) => JSON.stringify((e as Record<string, unknown>)[k]);
  return keys.find((k) => get(a, k) !== get(b, k)) ?? 'event_id';
};

const slotOf = (e: TrialRecorded): string =>
  JSON.stringify([e.suite, e.dataset_version, e.agent.version, e.run_id, e.row_id, e.attempt]);
const where = (o: ReadTrial['origin']): string => `${o.file}${o.line === undefined ? '' : ` line ${o.line}`}`;
const describe = (e: TrialRecorded): string =>
  `attempt ${e.attempt} of row ${e.row_id} (run ${e.run_id}, agent ${e.agent.version})`;

/**
 * Merges trials by event id. The same attempt read twice with the same content counts once (so a
 * file given twice, or re-read, changes nothing). The same attempt with different content, or two
 * event ids for the same attempt slot (run, row, attempt), is an error naming both places: offline,
 * passk never silently chooses between two verdicts.
 */
export const mergeTrials = (
  read: readonly ReadTrial[],
): { trials: TrialRecorded[]; duplicates: Map<string, number> } => {
  const seen = new Map<string, ReadTrial>();
  const slots = new Map<string, ReadTrial>();
  const duplicates = new Map<string, number>();
  for (const r of read) {
    const prior = seen.get(r.event.event_id);
    if (prior) {
      if (JSON.stringify(prior.event) !== JSON.stringify(r.event)) {
        const field = firstDifference(prior.event, r.event);
        throw new InputError(
          `${describe(r.event)} was already read from ${where(prior.origin)} with a different ${field}`,
          { ...r.origin, field },
        );
      }
      duplicates.set(r.origin.file, (duplicates.get(r.origin.file) ?? 0) + 1);
      continue;
    }
    const holder = slots.get(slotOf(r.event));
    if (holder)
      throw new InputError(
        `${describe(r.event)} was already read from ${where(holder.origin)} under another event id`,
        { ...r.origin, field: 'event_id' },
      );
    seen.set(r.event.event_id, r);
    slots.set(slotOf(r.event), r);
  }
  return { trials: [...seen.values()].map((r) => r.event), duplicates };
};

/** Reads trial files; any bad line fails the whole read (never a partial result). */
export const readTrialFiles = async (paths: readonly string[], opts: ReadOptions = {}): Promise<TrialFiles> => {
  if (paths.length === 0) throw new InputError('no trial files given');
  const perFile = await Promise.all(
    paths.map(async (file) => ({
      file,
      read: isCsv(file) ? await readCsvTrials(file, opts) : parseTrialText(await readText(file), file, opts),
    })),
  );
  const { trials, duplicates } = mergeTrials(perFile.flatMap((f) => f.read));
  const files = perFile.map((f) => ({ file: f.file, trials: f.read.length, duplicates: duplicates.get(f.file) ?? 0 }));
  for (const f of files) if (f.trials === 0) throw new InputError('no trials in this file', { file: f.file });
  return { trials, files };
};

const readText = async (file: string): Promise<string> => {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw unreadableFile(file, e);
  }
};
