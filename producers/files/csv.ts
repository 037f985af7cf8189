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
const OPTIONS = { bom: true, info: true, skip_empty_lines: true } as const satisfies Options;
type Parsed = { record: string[]; info: { lines: number } };

/** csv-parse counts the line a record ends on; a record starts that many line breaks (inside quoted cells) earlier. */
const startLine = (p: Parsed): number =>
  p.info.lines - p.record.reduce((n, cell) => n + (cell.match(/\r\n|\r|\n/g)?.length ?? 0), 0);

const csvError = (e: unknown, file: string): unknown =>
  e instanceof CsvError
    ? new InputError(`not valid CSV: ${e.message.replace(/ at line \d+/, '')}`, {
        file,
        line: (e as CsvError & { lines?: number }).lines,
      })
    : e;

/** Turns parsed records into header-keyed ones: the first record is the header; every record has as many cells. */
const keyed = (file: string) => {
  let names: string[] | undefined;
  return (p: Parsed): CsvRecord | undefined => {
    const line = startLine(p);
    if (!names) {
      names = p.record.map((h) => h.trim());
      return undefined;
    }
    if (p.record.length !== names.length)
      throw new InputError(`expected ${names.length} cells as in the header, found ${p.record.length}`, { file, line });
    return { line, fields: Object.fromEntries(names.map((n, i) => [n, p.record[i]!])) };
  };
};

// Record lengths are checked by `keyed`, with the header's count in the message.
const READ = { ...OPTIONS, relax_column_count: true } as const satisfies Options;

/** Parses CSV text with a header row; every record must have as many cells as the header. */
export const parseCsv = (text: string, file: string): CsvRecord[] => {
  let parsed: Parsed[];
  try {
    parsed = parseSync(text, READ) as unknown as Parsed[];
  } catch (e) {
    throw csvError(e, file);
  }
  const key = keyed(file);
  return parsed.map(key).filter((r): r is CsvRecord => r !== undefined);
};

/** The records of a CSV file, streamed from disk: memory holds one record at a time, not the file. */
export async function* streamCsv(file: string): AsyncGenerator<CsvRecord> {
  const parser = parse(READ);
  const input = createReadStream(file);
  input.on('error', (e) => parser.destroy(unreadableFile(file, e)));
  input.pipe(parser);
  const key = keyed(file);
  try {
    for await (const p of parser as AsyncIterable<Parsed>) {
      const r = key(p);
      if (r) yield r;
    }
  } catch (e) {
    throw csvError(e, file);
  } finally {
    input.destroy();
    parser.destroy();
  }
}
