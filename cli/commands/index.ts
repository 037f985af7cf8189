import type { Command } from 'commander';
import type { CommandName } from '../manifest.ts';

/** What a command file exports: a function that adds the command to the program. */
export type AddCommand = (program: Command) => void;

/**
 * Where each command of cli/manifest.ts is loaded from. Each command lives in its own file and adds itself to the
 * program; they are loaded on demand, so `passk report` loads only the report command and does not pay for Kafka,
 * chDB or the dashboard. No command imports this file or the manifest.
 */
export const LOADERS: Record<CommandName, () => Promise<AddCommand>> = {
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
  retract: async () => (await import('./retract.ts')).retractCommand,
  rebuild: async () => (await import('./rebuild.ts')).rebuildCommand,
  export: async () => (await import('./export.ts')).exportCommand,
};
