import { InputError } from '../../schemas/errors.ts';

/** One CSV record with the 1-based line it starts on, keyed by header. */
export type CsvRecord = { line: number; fields: Record<string, string> };

/** Splits RFC 4180 CSV into rows of cells (quoted cells may hold commas, quotes as "" and newlines). */
const cells = (text: string, file: string): { line: number; cells: string[] }[] => {
  const rows: { line: number; cells: string[] }[] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const endCell = (): void => {
    row.push(cell);
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else {
        if (ch === '\n') line++;
        cell += ch;
      }
    } else if (ch === '"' && cell === '') quoted = true;
    else if (ch === ',') endCell();
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endCell();
      rows.push({ line: start, cells: row });
      row = [];
      start = ++line;
    } else cell += ch;
  }
  if (quoted) throw new InputError('unterminated quoted cell', { file, line: start });
  if (cell !== '' || row.length > 0) rows.push({ line: start, cells: [...row, cell] });
  return rows.filter((r) => !(r.cells.length === 1 && r.cells[0]!.trim() === ''));
};

/** Parses CSV with a header row; every record must have as many cells as the header. */
export const parseCsv = (text: string, file: string): CsvRecord[] => {
  const [header, ...rows] = cells(text.replace(/^\uFEFF/, ''), file);
  if (!header) return [];
  const names = header.cells.map((h) => h.trim());
  return rows.map((r) => {
    if (r.cells.length !== names.length)
      throw new InputError(`expected ${names.length} cells as in the header, found ${r.cells.length}`, {
        file,
        line: r.line,
      });
    return { line: r.line, fields: Object.fromEntries(names.map((n, i) => [n, r.cells[i]!])) };
  });
};
