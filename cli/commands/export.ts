import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { collect } from './offlineOptions.ts';
import { writeStderr } from '../format/render.ts';
import { epilog } from '../format/helpText.ts';
import { storeTrials } from '../context.ts';

/**
 * A stored trial in the flat trial format (README, "The flat trial format"): `agent` becomes `agent_version`
 * and `model`; `event_id` and `occurred_at` are kept, so reading the file back gives the same events and
 * `passk report trials.jsonl` the same document as `passk report --from-store`.
 */
export const trialToFlat = (e: TrialRecorded): Record<string, unknown> => {
  const { type: _type, schema_version: _v, producer: _p, agent, ...rest } = e;
  const { event_id, occurred_at, suite, dataset_version, row_id, agent_version, run_id, attempt, passed, ...more } = {
    ...rest,
    agent_version: agent.version,
  };
  return {
    suite,
    dataset_version,
    row_id,
    agent_version,
    run_id,
    attempt,
    passed,
    ...(agent.model === undefined ? {} : { model: agent.model }),
    ...more,
    event_id,
    occurred_at,
  };
};

type ExportFlags = { suite?: string[]; agentVersion?: string[]; datasetVersion?: string[]; out?: string };

export const exportCommand = (program: Command): void => {
  const exp = program
    .command('export')
    .description(
      'Writes what the store holds back out as files: export trials gives the flat trial format that passk report ' +
        'FILE, compare and gate read, each stored event id once.',
    );
  exp
    .command('trials')
    .summary('the stored trials as flat trial JSON lines (what passk report FILE reads)')
    .option('--suite <name>', 'only this suite (repeatable)', collect)
    .option('--agent-version <v>', 'only this agent version (repeatable)', collect)
    .option('--dataset-version <v>', 'only this dataset version (repeatable)', collect)
    .option('--out <file>', 'write here instead of stdout')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk export trials > trials.jsonl
  passk export trials --suite refunds --agent-version refund-agent-v1 --out v1.jsonl

One line per stored trial (each event id once), ordered by suite, dataset version, agent version, row and time.
Exit codes: 0 ok, 2 bad input, 3 the store is unreachable or held by a process without a local API.`),
    )
    .action(async (flags: ExportFlags, cmd: Command) => {
      const trials = await storeTrials(cmd, {
        ...(flags.suite ? { suites: flags.suite } : {}),
        ...(flags.agentVersion ? { agentVersions: flags.agentVersion } : {}),
        ...(flags.datasetVersion ? { datasetVersions: flags.datasetVersion } : {}),
      });
      const body = trials.map((t) => `${JSON.stringify(trialToFlat(t))}\n`).join('');
      if (flags.out) {
        await writeFile(flags.out, body);
        writeStderr(`passk: wrote ${trials.length} trials to ${flags.out}\n`);
      } else process.stdout.write(body);
    });
};
