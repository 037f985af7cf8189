/** A command of the program: what `passk --help` lists of it. */
export interface CommandEntry {
  /** Its line in the program's help, as commander writes it from the loaded command (name, options, arguments). */
  readonly term: string;
  /** Its one-line summary; cli/program.ts gives it to the command once loaded. */
  readonly summary: string;
}

/**
 * The program's manifest: every command's name, help line and summary, as data. It imports nothing and nothing in
 * cli/commands/ imports it (an import graph without a cycle, test/conventions/importGraph.unit.test.ts). `passk --help` lists
 * each command from here without loading any (test/cli/outline.unit.test.ts checks them against the commands);
 * cli/commands/index.ts says where each one is loaded from.
 */
export const COMMANDS = {
  report: {
    term: 'report [options] [files...]',
    summary: 'reliability report of trial files: mean accuracy, pass@k, pass^k, flip rate, classes, with intervals',
  },
  compare: {
    term: 'compare [options] [files...]',
    summary: 'compare two agent versions row by row: class transitions, paired deltas, confirmation',
  },
  gate: {
    term: 'gate [options] [files...]',
    summary: 'release gate: must-not-break rows plus configured rules; exits 1 on fail',
  },
  run: {
    term: 'run [options]',
    summary: 'run an agent k times on every row of a dataset, grade and record every trial',
  },
  import: {
    term: 'import [options] <files...>',
    summary: "publish other tools' results (τ-bench, τ²-bench, promptfoo, Inspect, flat JSONL/CSV) to the event log",
  },
  process: {
    term: 'process [options]',
    summary: 'run the stream processors: live per-row state, changelog and store, exactly once',
  },
  demo: {
    term: 'demo [options]',
    summary:
      'the whole loop on a labeled refund-review dataset: two agent versions, the gate, production, the dashboard',
  },
  serve: {
    term: 'serve [options]',
    summary: 'the live reliability dashboard over the store (and, by default, the processors that fill it)',
  },
  ingest: {
    term: 'ingest [options]',
    summary: 'serve only the HTTP ingest API and the OTLP receiver (for production hosts)',
  },
  sample: {
    term: 'sample [options] <file>',
    summary: 'sample production traces from a file by a policy, redact PII, and record them',
  },
  review: {
    term: 'review [options]',
    summary: 'list sampled production failures, and confirm one with its expected result',
  },
  dataset: {
    term: 'dataset',
    summary: 'dataset versions: publish a rows file as a new version, list versions, export one as JSONL',
  },
  migrate: {
    term: 'migrate [options]',
    summary: 'create or upgrade the store schema (also done at start-up)',
  },
  config: {
    term: 'config [options]',
    summary: 'print the effective configuration and where each value came from',
  },
  check: {
    term: 'check [options]',
    summary: 'check the store: metrics from the raw trials equal the row state and the version summaries',
  },
  retract: {
    term: 'retract [options]',
    summary: 'take a mistaken run back: its trials stop counting in every number and view',
  },
  rebuild: {
    term: 'rebuild [options]',
    summary: 'replay the event log into the store (passk process does it at start when the store lost data)',
  },
  export: {
    term: 'export',
    summary: 'write what the store holds back out as files',
  },
} as const satisfies Record<string, CommandEntry>;

export type CommandName = keyof typeof COMMANDS;
