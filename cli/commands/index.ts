import type { Command } from 'commander';

type AddCommand = (program: Command) => void;

/** A command of the program: what `passk --help` lists of it, and how to load it. */
export interface CommandEntry {
  /** Its line in the program's help, as commander writes it from the loaded command (name, options, arguments). */
  readonly term: string;
  /** Its one-line summary; the command itself uses this one (`.summary(COMMANDS.x.summary)`). */
  readonly summary: string;
  readonly load: () => Promise<AddCommand>;
}

/**
 * Each command lives in its own file and adds itself to the program. They are loaded on demand: `passk report`
 * loads only the report command, so it does not pay for Kafka, chDB or the dashboard, and `passk --help` loads none,
 * listing each from its term and summary here (test/cli/outline.unit.test.ts checks them against the commands).
 */
export const COMMANDS = {
  report: {
    term: 'report [options] [files...]',
    summary: 'reliability report of trial files: mean accuracy, pass@k, pass^k, flip rate, classes, with intervals',
    load: async () => (await import('./report.ts')).reportCommand,
  },
  compare: {
    term: 'compare [options] [files...]',
    summary: 'compare two agent versions row by row: class transitions, paired deltas, confirmation',
    load: async () => (await import('./compare.ts')).compareCommand,
  },
  gate: {
    term: 'gate [options] [files...]',
    summary: 'release gate: must-not-break rows plus configured rules; exits 1 on fail',
    load: async () => (await import('./gate.ts')).gateCommand,
  },
  run: {
    term: 'run [options]',
    summary: 'run an agent k times on every row of a dataset, grade and record every trial',
    load: async () => (await import('./run.ts')).runCommand,
  },
  import: {
    term: 'import [options] <files...>',
    summary: "publish other tools' results (τ-bench, τ²-bench, promptfoo, Inspect, flat JSONL/CSV) to the event log",
    load: async () => (await import('./import.ts')).importCommand,
  },
  process: {
    term: 'process [options]',
    summary: 'run the stream processors: live per-row state, changelog and store, exactly once',
    load: async () => (await import('./process.ts')).processCommand,
  },
  demo: {
    term: 'demo [options]',
    summary:
      'the whole loop on a labeled refund-review dataset: two agent versions, the gate, production, the dashboard',
    load: async () => (await import('./demo.ts')).demoCommand,
  },
  serve: {
    term: 'serve [options]',
    summary: 'the live reliability dashboard over the store (and, by default, the processors that fill it)',
    load: async () => (await import('./serve.ts')).serveCommand,
  },
  ingest: {
    term: 'ingest [options]',
    summary: 'serve only the HTTP ingest API and the OTLP receiver (for production hosts)',
    load: async () => (await import('./ingest.ts')).ingestCommand,
  },
  sample: {
    term: 'sample [options] <file>',
    summary: 'sample production traces from a file by a policy, redact PII, and record them',
    load: async () => (await import('./sample.ts')).sampleCommand,
  },
  review: {
    term: 'review [options]',
    summary: 'list sampled production failures, and confirm one with its expected result',
    load: async () => (await import('./review.ts')).reviewCommand,
  },
  dataset: {
    term: 'dataset',
    summary: 'dataset versions: publish a rows file as a new version, list versions, export one as JSONL',
    load: async () => (await import('./dataset.ts')).datasetCommand,
  },
  migrate: {
    term: 'migrate [options]',
    summary: 'create or upgrade the store schema (also done at start-up)',
    load: async () => (await import('./migrate.ts')).migrateCommand,
  },
  config: {
    term: 'config [options]',
    summary: 'print the effective configuration and where each value came from',
    load: async () => (await import('./config.ts')).configCommand,
  },
  check: {
    term: 'check [options]',
    summary: 'check the store: metrics from the raw trials equal the row state and the version summaries',
    load: async () => (await import('./check.ts')).checkCommand,
  },
  export: {
    term: 'export',
    summary: 'write what the store holds back out as files',
    load: async () => (await import('./export.ts')).exportCommand,
  },
} satisfies Record<string, CommandEntry>;

export type CommandName = keyof typeof COMMANDS;

/** The entry of a command by any name (undefined when there is none, such as commander's own `help`). */
export const commandEntry = (name: string): CommandEntry | undefined =>
  Object.hasOwn(COMMANDS, name) ? COMMANDS[name as CommandName] : undefined;

/** Global options that take a value: their value is not the command name. */
const VALUE_OPTIONS = new Set(['--config', '--backend', '--data-dir', '--width']);

/** The command named on the command line, if it is one of ours (`passk help report` names report). */
export const commandIn = (args: readonly string[]): CommandName | undefined => {
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (a === 'help' && !help) help = true;
    else if (!a.startsWith('-')) return commandEntry(a) ? (a as CommandName) : undefined;
  }
  return undefined;
};
