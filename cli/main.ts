import { existsSync, readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../deploy/config.ts';
import { InputError, PipelineError } from '../schemas/errors.ts';
import { StoreLocked } from '../sinks/clickhouse/errors.ts';
import { commandIn, COMMANDS } from './commands/index.ts';
import { EXIT } from './exitCodes.ts';
import { setTerminalLayout, writeStderr } from './format/render.ts';

/** Joins the hard line breaks inside each paragraph, so the help is wrapped once, at the terminal's width. */
export const unwrap = (text: string): string =>
  text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim())
    .join('\n\n');

/** The package's version, read from its package.json (the one `npm install` put next to cli/). */
// From the sources that is ../package.json; compiled, dist/cli/main.js, it is ../../package.json.
const VERSION = (
  JSON.parse(
    readFileSync(
      ['../package.json', '../../package.json'].map((p) => new URL(p, import.meta.url)).find((u) => existsSync(u)) ??
        new URL('../package.json', import.meta.url),
      'utf8',
    ),
  ) as { version: string }
).version;

// Output piped into a reader that stops early (`passk --help | head`) ends the command quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

// `passk --version` (or -V) alone. Not commander's .version(): that makes --version global, so it would swallow
// `dataset export --version 2`.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
}

const program = new Command('passk')
  .description(
    'passk tells you whether your LLM agent can be depended on, not just whether it can succeed. ' +
      'It runs every labeled row several times and reports mean accuracy, pass@k, pass^k, flip rate ' +
      'and a stability class per row; it compares versions row by row and gates releases. passk --version prints the version.',
  )
  .option(
    '--config <file>',
    'config file, JSON or YAML (default: ./passk.config.json, .yaml or .yml; env PASSK_CONFIG)',
  )
  .option('--backend <kind>', 'embedded (default) or kafka (env PASSK_BACKEND)')
  .option('--data-dir <dir>', 'embedded data directory (default ./.passk; env PASSK_DATA_DIR)')
  .option('--width <columns>', "fit output to this many columns (default: the terminal's width)")
  .option('--wide', 'print tables at their full width, whatever the terminal')
  .hook('preAction', (cmd) => {
    const o = cmd.optsWithGlobals() as { width?: string; wide?: boolean };
    const width = o.width === undefined ? undefined : Number(o.width);
    if (width !== undefined && !(Number.isInteger(width) && width >= 20))
      throw new InputError(`--width: expected a whole number of columns, at least 20 (got "${o.width}")`);
    setTerminalLayout({ width, wide: o.wide ?? false });
  })
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .addHelpText(
    'after',
    `
Exit codes: ${Object.entries(EXIT)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}

Examples:
  passk report examples/public-trials/tau_bench.jsonl
  passk compare --baseline v1 --candidate v2 examples/refunds-v1-v2.jsonl
  passk gate --baseline v1 --candidate v2 --must-not-break examples/must-not-break.txt examples/refunds-v1-v2.jsonl`,
  );

try {
  const named = commandIn(process.argv.slice(2));
  for (const name of named ? [named] : Object.keys(COMMANDS)) (await COMMANDS[name]!())(program);
  // Descriptions are written as paragraphs (blank lines between them); commander wraps them once, to the terminal.
  for (const c of [program, ...program.commands]) c.description(unwrap(c.description()));
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else if (e instanceof InputError || e instanceof ConfigError) {
    writeStderr(`passk: ${e.message}\n`);
    process.exitCode = EXIT.usage;
  } else if (e instanceof StoreLocked || (e instanceof PipelineError && e.retriable)) {
    // a backend held by another process, or unreachable after every retry
    writeStderr(`passk: ${e.message}\n`);
    process.exitCode = EXIT.unavailable;
  } else {
    writeStderr(`passk: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = EXIT.error;
  }
  // A failed command ends here: a Kafka client it opened can leave a reconnect timer (or a consumer of a topology
  // that did not fail) behind, which would keep a `passk process` alive that processes nothing (found by the
  // fault campaign, docs/reliability.md). stderr is written synchronously to files and pipes.
  if (!(e instanceof CommanderError)) process.exit();
}
