// @ts-check
/**
 * CSV for a spreadsheet. A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel,
 * LibreOffice and Google Sheets (CSV injection: an end user's text in a trace could run one on a reviewer's machine),
 * so such a text cell gets a leading `'`, which the spreadsheet shows as text. Numbers stay numbers.
 */
const FORMULA = /^[\s]*[=+\-@\t\r]/;

/** @param {unknown} x */
export const csvCell = (x) => {
  if (typeof x === 'number') return String(x);
  const raw = String(x ?? '');
  const s = FORMULA.test(raw) ? `'${raw}` : raw;
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

/** @param {readonly Record<string, unknown>[]} records */
export const toCsv = (records) => {
  if (records.length === 0) return '';
  const cols = Object.keys(records[0] ?? {});
  return (
    [cols.map(csvCell).join(','), ...records.map((r) => cols.map((c) => csvCell(r[c])).join(','))].join('\n') + '\n'
  );
};
