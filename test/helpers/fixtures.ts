import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Other tools' real output files, byte for byte (test/fixtures/tool-outputs/README.md: source, version, license). */
export const TOOL_OUTPUTS = join(root, 'test/fixtures/tool-outputs');

/** The public per-trial benchmark files (examples/public-trials/README.md: source, version, license). */
export const PUBLIC_TRIALS = join(root, 'examples/public-trials');

export const toolOutput = (name: string): string => join(TOOL_OUTPUTS, name);
export const publicTrials = (name: string): string => join(PUBLIC_TRIALS, name);
