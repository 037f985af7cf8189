import type { Command } from 'commander';
import { existingEventIds } from '../../producers/logReader.ts';
import { failureConfirmed, findTrace, listProductionFailures } from '../../producers/review/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { InputError } from '../../schemas/errors.ts';
import { heading, table, text } from '../format/doc.ts';
import { renderJson, renderTerminal } from '../format/render.ts';
import { exitOnUnavailable, withEventLog } from './import.ts';

type ReviewFlags = {
  agentVersion?: string;
  segment?: string;
  limit: string;
  confirm?: string;
  expected?: string;
  dataset?: string;
  reviewer?: string;
  note?: string;
  input?: string;
  json?: boolean;
};

const excerpt = (s: string | undefined, n = 60) => (s === undefined ? '—' : s.length <= n ? s : `${s.slice(0, n - 1)}…`);

export const reviewCommand = (program: Command): void => {
  program
    .command('review')
    .summary('list sampled production failures, and confirm one with its expected result')
    .description(
      'Without --confirm: lists sampled production traces that failed an online grader, ended in an error or got\n' +
        'negative feedback, newest first, leaving out those already confirmed.\n' +
        'With --confirm TRACE_ID: records a FailureConfirmed (reviewer, expected result, dataset); the processors turn it\n' +
        'into a must-not-break row of a new dataset version, linked to the trace. Confirming the same trace twice counts once.',
    )
    .option('--agent-version <v>', 'only traces of this agent version')
    .option('--segment <s>', 'only traces of this segment')
    .option('--limit <n>', 'list at most this many', '50')
    .option('--confirm <trace_id>', 'confirm this trace as a failure')
    .option('--expected <text>', 'with --confirm: what the agent should have answered')
    .option('--dataset <id>', 'with --confirm: the dataset the new row joins')
    .option('--reviewer <name>', 'with --confirm: who confirmed it')
    .option('--note <text>', 'with --confirm: why')
    .option('--input <text>', "with --confirm: the row's input (default: the trace's redacted input)")
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `
Examples:
  passk review --agent-version support-v3
  passk review --confirm t-81f2 --expected deny --dataset refunds --reviewer ana --note "opened item, cosmetic wear"`,
    )
    .action(async (flags: ReviewFlags, cmd: Command) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new InputError('--limit must be a positive integer', { field: 'limit' });
      if (flags.confirm) {
        for (const f of ['expected', 'dataset', 'reviewer'] as const) if (!flags[f]) throw new InputError(`--confirm needs --${f}`, { field: f });
        const event = await withEventLog(cmd, async (log) => {
          const trace = await findTrace(log, flags.confirm!);
          if (!trace) throw new InputError(`no sampled trace with id ${flags.confirm}`, { field: 'confirm' });
          const e = failureConfirmed({
            trace,
            datasetId: flags.dataset!,
            expected: flags.expected!,
            reviewer: flags.reviewer!,
            at: Date.now(),
            ...(flags.note ? { note: flags.note } : {}),
            ...(flags.input ? { input: flags.input } : {}),
          });
          // Already confirmed (same trace, same dataset): the id is the same, publish nothing new.
          const known = await existingEventIds(log, [TOPICS.datasets]);
          if (!known.has(e.event_id)) await log.publisher.publish([e]);
          return e;
        }).catch(exitOnUnavailable);
        process.stdout.write(flags.json ? renderJson(event) : renderTerminal([text(`confirmed ${event.trace_id} as a failure for dataset ${event.dataset_id} (event ${event.event_id})`, 'good')]));
        return;
      }
      const failures = await withEventLog(cmd, (log) =>
        listProductionFailures(log, { limit, ...(flags.agentVersion ? { agentVersion: flags.agentVersion } : {}), ...(flags.segment ? { segment: flags.segment } : {}) }),
      ).catch(exitOnUnavailable);
      if (flags.json) return void process.stdout.write(renderJson({ failures: failures.map((f) => ({ ...f.trace, why: f.why })) }));
      process.stdout.write(
        renderTerminal([
          heading(`${failures.length} sampled production failures to review`),
          table(
            ['trace', 'time', 'agent version', 'segment', 'why', 'input', 'output'],
            failures.map(({ trace: t, why }) => [t.trace_id, new Date(t.occurred_at).toISOString(), t.agent_version, t.segment, why.join(', '), excerpt(t.payload?.input), excerpt(t.payload?.output)]),
          ),
        ]),
      );
    });
};
