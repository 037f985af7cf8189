import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `../shared/` beside the repository: the reference data sets (CI lays a copy there too). */
export const sharedPath = (...parts: string[]): string =>
  join(fileURLToPath(new URL('../../../shared', import.meta.url)), ...parts);
