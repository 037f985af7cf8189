import { createReadStream } from 'node:fs';
import { CsvError, parse, type Options } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { InputError, unreadableFile } from '../../schemas/errors.ts';

/** One CSV record with the 1-based line it starts on, keyed by header. */
export type CsvRecord = { line: number; fields: Record<string, string> };

/**
 * RFC 4180 CSV as csv-parse reads it: quoted cells may hold commas, quotes as "" and newlines; a BOM is dropped;
 * the record delimiter (\n, \r\n or \r) is the first record's; empty lines are skipped.
 */
const OPTIONS = { bom: true, skip_empty_lines: true } as const satisfies Options;
type Parsed = { record: string[]; info: { lines: number } };

const count = (cells: readonly string[], re: RegExp): number =>
  cells.reduce((n, cell) => n + (cell.match(re)?.length ?? 0), 0);

const csvError = (e: unknown, file: string, drift: number): unknown =>
  e instanceof CsvError
    ? new InputError(`not valid CSV: ${e.message.replace(/ at line \d+/, '')}`, {
        file,
        line: (e as CsvError & { lines?: number }).lines! - drift,
      })
    : e;

/**
 * Turns parsed records into header-keyed ones: the first record is the header; every record has as many cells.
 * csv-parse counts the line a record ends on, counting a \r\n inside a quoted cell as two lines; `drift` is how far
 * its count is ahead of the file's lines so far, so records (and errors) are numbered as an editor shows the file.
 */
const keyed = (file: string) => {
  let names: string[] | undefined;
  const state = { drift: 0 };
  const key = (p: Parsed): CsvRecord | undefined => {
    const crlf = count(p.record, /\r\n/g);
    const end = p.info.lines - state.drift - crlf;
    state.drift += crlf;
    const line = end - count(p.record, /\r\n|\r|\n/g);
    if (!names) {
      names = p.record.map((h) => h.trim());
      return undefined;
    }
    if (p.record.length !== names.length)
      throw new InputError(`expected ${names.length} cells as in the header, found ${p.record.length}`, { file, line });
    return { line, fields: Object.fromEntries(names.map((n, i) => [n, p.record[i]!])) };
  };
  return { key, state };
};

// Record lengths are checked by `keyed`, with the header's count in the message.
const READ = { ...OPTIONS, relax_column_count: true } as const satisfies Options;

/** Parses CSV text with a header row; every record must have as many cells as the header. */
export const parseCsv = (text: string, file: string): CsvRecord[] => {
  const { key, state } = keyed(file);
  const out: CsvRecord[] = [];
  try {
    // on_record sees each record as it is parsed, so an error's line is corrected by the records before it
    parseSync(text, {
      ...READ,
      on_record: (record, context) => {
        const r = key({ record, info: context });
        if (r) out.push(r);
        return null;
      },
    });
  } catch (e) {
    throw csvError(e, file, state.drift);
  }
  return out;
};

/** The records of a CSV file, streamed from disk: memory holds one record at a time, not the file. */
export async function* streamCsv(file: string, onRead?: (bytes: number) => void): AsyncGenerator<CsvRecord> {
  const parser = parse({ ...READ, info: true });
  const input = createReadStream(file);
  if (onRead) input.on('data', (chunk) => onRead(chunk.length));
  input.on('error', (e) => parser.destroy(unreadableFile(file, e)));
  input.pipe(parser);
  const { key, state } = keyed(file);
  try {
    for await (const p of parser as AsyncIterable<Parsed>) {
      const r = key(p);
      if (r) yield r;
    }
  } catch (e) {
    throw csvError(e, file, state.drift);
  } finally {
    input.destroy();
    parser.destroy();
  }
}
