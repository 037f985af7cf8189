import type { Command } from 'commander';

/** Each command lives in its own file and adds itself to the program. */
export const COMMANDS: ((program: Command) => void)[] = [];
