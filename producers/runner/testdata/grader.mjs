export const version = 'g-7';
export default ({ row, output }) =>
  output === undefined ? null : { passed: output.length === String(row.expected).length, score: output.length / 10 };
