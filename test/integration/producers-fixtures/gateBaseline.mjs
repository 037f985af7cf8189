// A baseline that answers every row of the confirmation test right: "yes" to every input.
export const meta = { version: 'gate-base' };
export default async () => 'yes';
