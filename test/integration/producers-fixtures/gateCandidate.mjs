// A candidate that breaks one row of the confirmation test (input "x2") every time: a regression to confirm.
export const meta = { version: 'gate-cand' };
export default async (input) => (input === 'x2' ? 'no' : 'yes');
