import { Command, Help } from 'commander';
import { InputError } from '../schemas/errors.ts';
import { LOADERS } from './commands/index.ts';
import { EXIT } from './exitCodes.ts';
import { epilog } from './format/helpText.ts';
import { PASSK, setCommandGlobals } from './format/doc.ts';
import { parseWidth, setTerminalLayout } from './format/render.ts';
import { columnsOf } from '../deploy/terminal.ts';
import { COMMANDS, type CommandEntry, type CommandName } from './manifest.ts';
import { releaseEarlySignals } from './signals.ts';

/** Joins the hard line breaks inside each paragraph, so the help is wrapped once, at the terminal's width. */
export const unwrap = (text: string): string =>
  text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim())
    .join('\n\n');

/**
 * `--width N` among the arguments, for the help: commander prints it before any hook runs, and fits it to
 * stdout's columns (80 into a pipe) unless told otherwise. A bad value is left to the hook to refuse.
 */
const helpWidthIn = (args: readonly string[]): number | undefined => {
  const i = args.findIndex((a) => a === '--width' || a.startsWith('--width='));
  if (i === -1) return undefined;
  return parseWidth(args[i]!.startsWith('--width=') ? args[i]!.slice(8) : args[i + 1]);
};

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

/** Loads one command into the program, with its summary from the manifest. */
const addCommand = async (program: Command, name: CommandName): Promise<void> => {
  (await LOADERS[name]())(program);
  program.commands.find((c) => c.name() === name)?.summary(COMMANDS[name].summary);
};

/** The program without its commands: the global options, the hooks and the help's end. */
const createProgram = (args: readonly string[]): Command => {
  const program = new Command('passk');
  // the help's width by the output's rule (render.ts): --width, then COLUMNS, then commander's (the terminal's, 80 piped)
  const columns = parseWidth(columnsOf());
  const width = helpWidthIn(args) ?? columns;
  if (width !== undefined) program.configureOutput({ getOutHelpWidth: () => width, getErrHelpWidth: () => width });
  return program
    .description(
      'passk tells you whether your LLM agent can be depended on, not just whether it can succeed. ' +
        'It runs every labeled row several times and reports mean accuracy, pass@k, pass^k, flip rate ' +
        `and a stability class per row; it compares versions row by row and gates releases. ${PASSK} --version prints the version.`,
    )
    .option(
      '--config <file>',
      'config file, JSON or YAML (default: ./passk.config.json, .yaml or .yml; env PASSK_CONFIG)',
    )
    .option('--backend <kind>', 'embedded (default) or kafka (env PASSK_BACKEND)')
    .option('--data-dir <dir>', 'embedded data directory (default ./.passk; env PASSK_DATA_DIR)')
    .option(
      '--width <columns>',
      "fit output to this many columns (default: $COLUMNS, else the terminal's width; piped: whole lines)",
    )
    .option('--wide', 'print tables at their full width, whatever the terminal')
    .hook('preAction', (cmd, action) => {
      releaseEarlySignals(action.name(), (action.opts() as { follow?: boolean }).follow === true);
      const o = cmd.optsWithGlobals() as {
        width?: string;
        wide?: boolean;
        config?: string;
        backend?: string;
        dataDir?: string;
      };
      setCommandGlobals(o);
      const width = parseWidth(o.width);
      if (o.width !== undefined && width === undefined)
        throw new InputError(`--width: expected a whole number of columns, at least 20 (got "${o.width}")`);
      setTerminalLayout({ width, wide: o.wide ?? false, columns });
    })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      epilog(`
Exit codes: ${Object.entries(EXIT)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}

Examples:
  passk report examples/public-trials/tau_bench.jsonl
  passk compare --baseline v1 --candidate v2 examples/refunds-v1-v2.jsonl
  passk gate --baseline v1 --candidate v2 --must-not-break examples/must-not-break.txt examples/refunds-v1-v2.jsonl`),
    );
};

/**
 * The program for these arguments. A named command is loaded alone (`passk report` does not pay for Kafka, chDB or
 * the dashboard). Without one (`passk --help`, `passk`, a mistyped name), each command is listed from its outline in
 * cli/manifest.ts and none is loaded, so the help is quick; `outline: false` loads them all instead (the test that
 * both give the same help).
 */
export const buildProgram = async (args: readonly string[], opts: { outline?: boolean } = {}): Promise<Command> => {
  const program = createProgram(args);
  const named = commandIn(args);
  if (named) await addCommand(program, named);
  else if (opts.outline === false)
    for (const name of Object.keys(COMMANDS) as CommandName[]) await addCommand(program, name);
  else {
    for (const [name, c] of Object.entries(COMMANDS)) program.command(name).summary(c.summary);
    const help = new Help();
    program.configureHelp({ subcommandTerm: (c) => commandEntry(c.name())?.term ?? help.subcommandTerm(c) });
  }
  // Descriptions are written as paragraphs (blank lines between them); commander wraps them once, to the terminal.
  for (const c of [program, ...program.commands]) c.description(unwrap(c.description()));
  return program;
};
