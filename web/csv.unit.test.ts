import { describe, expect, it } from 'vitest';
// @ts-expect-error: the dashboard's plain browser module has no types
import { csvCell, toCsv } from './client/csv.js';

describe('the explorer’s CSV export', () => {
  it.each([
    ['=HYPERLINK("http://evil.example","x")', `"'=HYPERLINK(""http://evil.example"",""x"")"`],
    ['+1+2', "'+1+2"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    [' =1', "' =1"],
    ['plain text', 'plain text'],
    ['a,b', '"a,b"'],
  ])('neutralizes a formula-leading cell: %j', (cell, csv) => {
    expect(csvCell(cell)).toBe(csv);
  });

  it('keeps numbers, negative ones too, as numbers', () => {
    expect(toCsv([{ row: '=cmd', delta: -0.25, n: 3 }])).toBe("row,delta,n\n'=cmd,-0.25,3\n");
  });
});
