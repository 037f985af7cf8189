import type { Command } from 'commander';
import type { PasskConfig } from '../../deploy/config.ts';
import {
  confirmFailure,
  confirmedTraceIds,
  failureSignals,
  listProductionFailures,
  type ProductionFailure,
} from '../../producers/review/index.ts';
import {
  listStoredFailures,
  StoreLocked,
  suiteAgentVersions,
  type TraceFilters,
} from '../../sinks/clickhouse/index.ts';
import { agentCheck, CLI_OVERRIDE } from './confirmAgent.ts';
import { InputError, PipelineError } from '../../schemas/errors.ts';
import { heading, nextCommand, passkCommand, quoteArg, table, text } from '../format/doc.ts';
import { foldedNext } from '../format/storeHeld.ts';
import { renderJson, renderTerminal, writeStderr } from '../format/render.ts';
import { EXIT } from '../exitCodes.ts';
import { epilog } from '../format/helpText.ts';
import { redactorsOf } from './redactFlags.ts';
import { configOf, exitOnUnavailable, withEventLog, withReader } from '../context.ts';

type ReviewFlags = {
  agentVersion?: string;
  segment?: string;
  user?: string;
  session?: string;
  model?: string;
  minLatency?: string;
  limit: string;
  confirm?: string;
  expected?: string;
  dataset?: string;
  reviewer?: string;
  note?: string;
  input?: string;
  anyAgent?: boolean;
  from: string;
  json?: boolean;
};

/**
 * The store's failures, minus those confirmed in the log and not yet stored. A store held by another
 * process (the embedded store while `passk process` runs) throws StoreLocked.
 */
const fromStore = async (
  cmd: Command,
  config: PasskConfig,
  filter: { limit: number; agentVersion?: string; segment?: string } & TraceFilters,
): Promise<ProductionFailure[]> => {
  const confirmed = await withEventLog(cmd, confirmedTraceIds, config);
  return withReader(cmd, (reader) =>
    listStoredFailures(reader, { ...filter, why: failureSignals, alsoConfirmed: confirmed }),
  );
};

const minLatency = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0)
    throw new InputError(`--min-latency is milliseconds (a number ≥ 0), got "${v}"`, { field: 'min-latency' });
  return n;
};

const excerpt = (s: string | undefined, n = 60) =>
  s === undefined ? '—' : s.length <= n ? s : `${s.slice(0, n - 1)}…`;

export const reviewCommand = (program: Command): void => {
  program
    .command('review')
    .description(
      'Without --confirm: lists sampled production traces that failed an online grader, ended in an error or got\n' +
        'negative feedback, newest first, leaving out those already confirmed. It reads the store, where passk process\n' +
        'writes the sampled traces (--from log reads the event log instead).\n\n' +
        'With --confirm TRACE_ID: records a FailureConfirmed (reviewer, expected result, dataset); the processors turn it\n' +
        'into a must-not-break row of a new dataset version, linked to the trace. Confirming the same trace twice counts once.\n' +
        "It says which agent version recorded the trace, and refuses one with no trials on the dataset's suite while\n" +
        'other versions have some (another agent: --any-agent confirms it all the same).\n\n' +
        'The dashboard (passk serve --ingest-token …) lists the same traces in its Production view and confirms them there too.',
    )
    .option('--agent-version <v>', 'only traces of this agent version')
    .option('--segment <s>', 'only traces of this segment')
    .option('--user <id>', 'only traces of this end user (as stored: redacted)')
    .option('--session <id>', 'only traces of this session')
    .option('--model <name>', 'only traces that asked for, or were answered by, this model')
    .option('--min-latency <ms>', 'only traces that took at least this long')
    .option('--limit <n>', 'list at most this many', '50')
    .option('--confirm <trace_id>', 'confirm this trace as a failure')
    .option('--expected <text>', 'with --confirm: what the agent should have answered')
    .option('--dataset <id>', 'with --confirm: the dataset the new row joins')
    .option('--reviewer <name>', 'with --confirm: who confirmed it')
    .option('--note <text>', 'with --confirm: why')
    .option('--input <text>', "with --confirm: the row's input (default: the trace's redacted input)")
    .option(
      '--any-agent',
      "with --confirm: confirm a trace whose agent version has no trials on the dataset's suite (refused without)",
    )
    .option(
      '--from <where>',
      'list from the store (filled by passk process), the event log, or auto: the store, else the log when another process holds it',
      'auto',
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk review --agent-version support-v3
  passk review --user user-7 --min-latency 2000 --json
  passk review --confirm t-81f2 --expected deny --dataset refunds --reviewer ana --note "opened item, cosmetic wear"

t-81f2 stands for a trace id that passk review lists (passk sample
examples/traces.jsonl records some, of agent version support-v3).

Exit codes: 0 ok, 2 bad input (an unknown trace id, a missing --expected/--dataset/--reviewer,
a trace of an agent version with no trials on the dataset's suite, without --any-agent),
3 the event log is unreachable, or --from store while another process holds the embedded store.`),
    )
    .action(async (flags: ReviewFlags, cmd: Command) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1)
        throw new InputError('--limit must be a positive integer', { field: 'limit' });
      if (flags.confirm) {
        for (const f of ['expected', 'dataset', 'reviewer'] as const)
          if (!flags[f]) throw new InputError(`--confirm needs --${f}`, { field: f });
          else if (/^<.*>$/.test(flags[f]))
            throw new InputError(`--${f} ${flags[f]} is a placeholder: replace it with the value`, { field: f });
        // the agent versions with trials on the dataset's suite, to check the trace's against before it is published
        const check = agentCheck({
          dataset: flags.dataset!,
          anyAgent: flags.anyAgent === true,
          versionsOf: (suite) => withReader(cmd, (q) => suiteAgentVersions(q, { suite })),
          override: CLI_OVERRIDE,
        });
        const { event, trace } = await withEventLog(cmd, (log) =>
          confirmFailure(
            log,
            {
              traceId: flags.confirm!,
              datasetId: flags.dataset!,
              expected: flags.expected!,
              reviewer: flags.reviewer!,
              ...(flags.note ? { note: flags.note } : {}),
              ...(flags.input ? { input: flags.input } : {}),
              redactors: redactorsOf(configOf(cmd)),
            },
            check.vet,
          ),
        ).catch(exitOnUnavailable);
        const checked = check.checked(trace);
        process.stdout.write(
          flags.json
            ? renderJson(event)
            : renderTerminal([
                text(
                  `confirmed ${event.trace_id} (agent version ${trace.agent_version}, segment ${trace.segment}) as a ` +
                    `failure for dataset ${event.dataset_id} (event ${event.event_id})`,
                  'good',
                ),
                ...(checked ? [text(checked, 'warn')] : []),
                foldedNext(configOf(cmd), {
                  then: [passkCommand(`dataset versions --dataset ${quoteArg(event.dataset_id)}`)],
                  what: 'this confirmation',
                }),
              ]),
        );
        return;
      }
      if (!['auto', 'store', 'log'].includes(flags.from))
        throw new InputError('--from is auto, store or log', { field: 'from' });
      const config = configOf(cmd);
      const filter = {
        limit,
        ...(flags.agentVersion ? { agentVersion: flags.agentVersion } : {}),
        ...(flags.segment ? { segment: flags.segment } : {}),
        ...(flags.user ? { userId: flags.user } : {}),
        ...(flags.session ? { sessionId: flags.session } : {}),
        ...(flags.model ? { model: flags.model } : {}),
        ...(flags.minLatency === undefined ? {} : { minLatencyMs: minLatency(flags.minLatency) }),
      };
      const fromLog = () =>
        withEventLog(cmd, (log) => listProductionFailures(log, filter), config).catch(exitOnUnavailable);
      let source: 'store' | 'log' = flags.from === 'log' ? 'log' : 'store';
      let failures: ProductionFailure[];
      if (source === 'log') failures = await fromLog();
      else
        try {
          failures = await fromStore(cmd, config, filter);
        } catch (e) {
          if (!(e instanceof StoreLocked || (e instanceof PipelineError && e.retriable))) throw e;
          if (flags.from === 'store') {
            writeStderr(
              `passk: ${(e as Error).message}\n  (another passk process holds the embedded store: stop it, or use --from log)\n`,
            );
            process.exitCode = EXIT.unavailable;
            return;
          }
          writeStderr(`passk: the store is busy (${(e as Error).message}); listing from the event log instead\n`);
          source = 'log';
          failures = await fromLog();
        }
      if (flags.json)
        return void process.stdout.write(
          renderJson({ source, failures: failures.map((f) => ({ ...f.trace, why: f.why })) }),
        );
      process.stdout.write(
        renderTerminal([
          heading(`${failures.length} sampled production failures to review`),
          text(
            source === 'store'
              ? 'from the store (traces reach it through passk process; --from log reads the event log)'
              : 'from the event log',
          ),
          table(
            ['trace', 'time', 'agent version', 'segment', 'why', 'input', 'output'],
            failures.map(({ trace: t, why }) => [
              t.trace_id,
              new Date(t.occurred_at).toISOString(),
              t.agent_version,
              t.segment,
              why.join(', '),
              excerpt(t.payload?.input),
              excerpt(t.payload?.output),
            ]),
          ),
          ...(failures[0]
            ? [
                nextCommand(
                  passkCommand(
                    `review --confirm ${quoteArg(failures[0].trace.trace_id)} --expected '<answer>' --dataset '<id>' --reviewer '<you>'`,
                  ),
                ),
              ]
            : []),
        ]),
      );
    });
};
