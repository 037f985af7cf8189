import { userInfo } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { retractRun, type RetractionPlan } from '../../producers/retract/index.ts';
import { heading, passkCommand, table, text, type Block } from '../format/doc.ts';
import { epilog } from '../format/helpText.ts';
import { renderJson, renderTerminal } from '../format/render.ts';
import { exitOnUnavailable, withEventLog } from '../context.ts';

type RetractFlags = { run: string; suite?: string; reason: string; by?: string; dryRun?: boolean; json?: boolean };

const nonEmpty = (flag: string) => (v: string) => {
  if (v.trim() === '') throw new InvalidArgumentError(`${flag} needs a value`);
  return v;
};

/** A time as UTC with its zone, to the second. */
const utc = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const planBlocks = (p: RetractionPlan, dryRun: boolean): Block[] => [
  heading(`${dryRun ? 'Would retract' : 'Retracted'} run ${p.run_id}`),
  text(
    `${plural(p.trials, 'trial')} on ${plural(p.rows, 'row')} ${dryRun ? 'would no longer count' : 'no longer count'}` +
      ' in row state, pass@k, reports, compare, gates and the dashboard',
    dryRun ? undefined : 'warn',
  ),
  table(
    ['suite', 'agent version', 'dataset version', 'rows', 'trials', 'passed', 'failed', 'ungraded'],
    p.versions.map((v) => [
      v.suite,
      v.agent_version,
      v.dataset_version,
      String(v.rows),
      String(v.trials),
      String(v.passed),
      String(v.failed),
      String(v.ungraded),
    ]),
  ),
  text(`reason: ${p.reason}`),
  text(`by ${p.retracted_by} at ${utc(p.retracted_at)}; retraction ${p.retraction_id}`, 'dim'),
  text(
    dryRun
      ? 'nothing published (--dry-run); run again without it to retract'
      : `the processors (${passkCommand('process')}, ${passkCommand('serve')}) take them out as they read the log`,
    'dim',
  ),
];

export const retractCommand = (program: Command): void => {
  program
    .command('retract')
    .description(
      'Takes a mistaken run back, so it never becomes a version: a RunRetracted event per row of the run\n' +
        "goes to the event log (the run's trials stay there: events are immutable). The processors take the\n" +
        "run's attempts out of each row's state, and the row state, pass@k, report --from-store, compare,\n" +
        'gates and the dashboard all leave them out; a rebuild from the log gives the same. Prints what it\n' +
        'retracts (trials and rows per version) first. See docs/processors.md, "Retracting a run".',
    )
    .requiredOption('--run <run_id>', 'the run to retract (the run id passk run printed)', nonEmpty('--run'))
    .option(
      '--suite <name>',
      'the suite of the run (needed when several suites hold a run of that id)',
      nonEmpty('--suite'),
    )
    .requiredOption(
      '--reason <text>',
      'why, in words; kept with the retraction and shown with it',
      nonEmpty('--reason'),
    )
    .option('--by <name>', 'who retracts it (default: the user name of this shell)', nonEmpty('--by'))
    .option('--dry-run', 'print what would be retracted, publish nothing')
    .option('--json', 'print the retraction as JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk retract --run run-2 --reason "typo in the agent command" --dry-run
  passk retract --run run-2 --suite refunds --reason "wrong model" --by ana --json

run-2 stands for the run id passk run printed (passk import examples/refunds-v1-v2.jsonl
records runs run-1 and run-2 of suite refunds).

JSON: {retraction_id, run_id, reason, retracted_by, retracted_at, rows, trials, versions: [{suite,
  agent_version, dataset_version, rows, trials, passed, failed, ungraded}], published, dry_run}.
Exit codes: 0 retracted (or, with --dry-run, found), 2 bad input (an unknown run, a run id in several
suites without --suite, a run already retracted, an empty --reason), 3 the event log is unreachable.`),
    )
    .action(async (flags: RetractFlags, cmd: Command) => {
      const dryRun = flags.dryRun === true;
      const plan = await withEventLog(cmd, (log) =>
        retractRun(log, {
          runId: flags.run,
          ...(flags.suite !== undefined ? { suite: flags.suite } : {}),
          reason: flags.reason,
          by: flags.by ?? userInfo().username,
          dryRun,
        }),
      ).catch(exitOnUnavailable);
      const { events, ...doc } = plan;
      process.stdout.write(
        flags.json
          ? renderJson({ ...doc, published: dryRun ? 0 : events.length, dry_run: dryRun })
          : renderTerminal(planBlocks(plan, dryRun)),
      );
    });
};
