import type { Command } from 'commander';

type AddCommand = (program: Command) => void;

/**
 * Each command lives in its own file and adds itself to the program. They are loaded on demand:
 * `passk report` loads only the report command, so it does not pay for Kafka, chDB or the
 * dashboard; `passk --help` loads them all to list them.
 */
export const COMMANDS: Record<string, () => Promise<AddCommand>> = {
  report: async () => (await import('./report.ts')).reportCommand,
  compare: async () => (await import('./compare.ts')).compareCommand,
  gate: async () => (await import('./gate.ts')).gateCommand,
  run: async () => (await import('./run.ts')).runCommand,
  import: async () => (await import('./import.ts')).importCommand,
  process: async () => (await import('./process.ts')).processCommand,
  demo: async () => (await import('./demo.ts')).demoCommand,
  serve: async () => (await import('./serve.ts')).serveCommand,
  ingest: async () => (await import('./ingest.ts')).ingestCommand,
  sample: async () => (await import('./sample.ts')).sampleCommand,
  review: async () => (await import('./review.ts')).reviewCommand,
  dataset: async () => (await import('./dataset.ts')).datasetCommand,
  migrate: async () => (await import('./migrate.ts')).migrateCommand,
  config: async () => (await import('./config.ts')).configCommand,
  check: async () => (await import('./check.ts')).checkCommand,
  export: async () => (await import('./export.ts')).exportCommand,
};

/** Global options that take a value: their value is not the command name. */
const VALUE_OPTIONS = new Set(['--config', '--backend', '--data-dir', '--width']);

/** The command named on the command line, if it is one of ours. */
export const commandIn = (args: readonly string[]): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return Object.hasOwn(COMMANDS, a) ? a : undefined;
  }
  return undefined;
};
