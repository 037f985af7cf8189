import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseMustNotBreakList } from '../../producers/files/mustNotBreakFile.ts';
import type { EventLog } from '../../processors/ports.ts';
import {
  DEFAULT_RUN_RETRY,
  DEFAULT_STOP_AFTER,
  confirmationRequests,
  runAdaptive,
  runConfirmations,
  runDataset,
  type AdaptiveSummary,
  type ConfirmationsSummary,
  type RunDatasetDeps,
  type RunOptions,
  type RunSummary,
} from '../../producers/runner/index.ts';
import { matchingVersion, readDatasets } from '../../producers/datasets/index.ts';
import { readDataset } from '../../producers/runner/dataset.ts';
import { InputError } from '../../schemas/errors.ts';
import { heading, nextCommand, PASSK, passkCommand, quoteArg, table, text, thisCommand } from '../format/doc.ts';
import { progressBar } from '../format/progress.ts';
import { renderJson, renderTerminal, writeStderr } from '../format/render.ts';
import { foldedNext } from '../format/storeHeld.ts';
import { duration } from './offlineOptions.ts';
import { epilog } from '../format/helpText.ts';
import { configOf, exitOnUnavailable, withEventLog } from '../context.ts';
import { EXIT } from '../exitCodes.ts';
import { pct, rowList, usd } from '../format/numbers.ts';

const positiveInt =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer, got "${v}"`);
    return n;
  };
const nonNegativeInt =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new InvalidArgumentError(`${name} must be a non-negative integer, got "${v}"`);
    return n;
  };
type RunFlags = {
  dataset: string;
  agent: string;
  k: number;
  concurrency: number;
  timeout: number;
  retries: number;
  isolation: 'worker' | 'none';
  grader?: string;
  regexFlags?: string;
  schema?: string;
  rubric?: string;
  rubricVersion?: string;
  judgeUrl?: string;
  judgeModel?: string;
  judgeVersion?: string;
  suite?: string;
  datasetId?: string;
  datasetVersion?: string;
  agentVersion?: string;
  runId?: string;
  confirm?: string;
  extra?: number;
  confirmations?: boolean;
  follow?: boolean;
  poll: number;
  resume: boolean;
  stopAfter: number;
  json?: boolean;
  adaptive?: boolean;
  budget?: number;
  maxK?: number;
  firstK?: number;
};

/**
 * The dataset version a run pins: --dataset-version when given, else the published version of the dataset
 * id whose rows are exactly the file's (passk dataset publish), else the file's content hash. Says which on stderr.
 */
const pinDataset = async (log: EventLog, opts: RunOptions, quiet: boolean): Promise<RunOptions> => {
  if (opts.datasetVersion) return opts;
  const file = await readDataset(opts.dataset);
  const datasetId = opts.datasetId ?? file.name;
  const state = (await readDatasets(log)).get(datasetId);
  const version = matchingVersion(state, file);
  const say = (line: string) => void (quiet || writeStderr(`passk: ${line}\n`));
  // without a published version the live gate cannot know the rows: say what it will do instead
  const gate = `a live gate (${PASSK} gate --declare) on ${file.version} knows no row set, so it counts a version complete once a run of it is finished and every trial of that run is recorded (passk process)`;
  if (version) say(`pinned dataset ${datasetId} version ${version} (published, same rows as ${opts.dataset})`);
  else if (state)
    say(
      `${opts.dataset} differs from every published version of ${datasetId}; trials pinned to ${file.version}; ${gate}. Publish it first: ${passkCommand(`dataset publish ${quoteArg(opts.dataset)} --dataset ${quoteArg(datasetId)}`)}`,
    );
  else
    say(
      `dataset ${datasetId} is not published; trials pinned to ${file.version}; ${gate} (${passkCommand(`dataset publish ${quoteArg(opts.dataset)} --dataset ${quoteArg(datasetId)}`)} gives it the rows)`,
    );
  return { ...opts, datasetId, datasetVersion: version ?? file.version };
};

/**
 * `--confirmations --follow`: runs what the open requests need, then checks passk.decisions every `pollMs`
 * and runs again whenever an open request for this agent version appears that it has not completed;
 * stops on SIGTERM / SIGINT (the trials in flight are finished and recorded first).
 */
const followConfirmations = async (
  log: EventLog,
  opts: RunOptions,
  deps: RunDatasetDeps,
  f: { pollMs: number; json: boolean; signal: AbortSignal },
): Promise<void> => {
  const pinned = await pinDataset(log, opts, f.json);
  const done = new Set<string>();
  let agentVersion: string | undefined;
  const say = (line: string) => void (f.json || writeStderr(`passk: ${line}\n`));
  while (!f.signal.aborted) {
    const waiting = agentVersion
      ? (await confirmationRequests(log, agentVersion)).open.filter((r) => !done.has(r.event_id))
      : undefined;
    if (!waiting || waiting.length > 0) {
      const summary = await runConfirmations(pinned, deps);
      if (!agentVersion) say(`following confirmation requests for ${summary.agentVersion} until SIGTERM or Ctrl-C`);
      agentVersion = summary.agentVersion;
      const ran = summary.runs.filter((r) => r.summary.done > 0);
      if (ran.length > 0 || summary.elsewhere.length > 0)
        process.stdout.write(f.json ? `${JSON.stringify(summary)}\n` : renderTerminal(confirmationBlocks(summary)));
      // requests for another dataset or suite are not ours to run: do not retry them on every poll
      for (const e of summary.elsewhere) done.add(e.request.event_id);
      for (const r of (await confirmationRequests(log, agentVersion)).open)
        if (summary.runs.some((x) => x.runId === r.run_id && x.summary.status === 'completed')) done.add(r.event_id);
    }
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        f.signal.removeEventListener('abort', wake);
        resolve();
      }, f.pollMs);
      f.signal.addEventListener('abort', wake, { once: true });
    });
  }
  say('stopped following confirmation requests');
};

/** What `--confirmations` did: one line per request, plus the requests it left and why. */
const confirmationBlocks = (s: ConfirmationsSummary) => [
  heading(
    `confirmation requests for ${s.agentVersion} · suite ${s.suite} · dataset ${s.datasetVersion}`,
    1,
    s.status === 'completed' ? 'good' : 'warn',
  ),
  s.runs.length === 0
    ? text('no confirmation request of the processors is waiting for this agent version on this dataset')
    : table(
        [
          'comparison',
          'run',
          'rows',
          'attempts per row',
          'already recorded',
          'ran',
          'passed',
          'failed',
          'ungraded',
          'status',
        ],
        s.runs.map((r) => [
          r.comparisonId,
          r.runId,
          String(r.rows.length),
          String(r.attempts),
          String(r.summary.skipped),
          String(r.summary.done),
          String(r.summary.passed),
          String(r.summary.failed),
          String(r.summary.ungraded),
          r.summary.status,
        ]),
      ),
  ...s.elsewhere.map((e) => text(`not run: ${e.request.comparison_id} asks for ${e.why}`, 'warn')),
  ...(s.decided ? [text(`${s.decided} request(s) whose gate is already decided: nothing to run`)] : []),
];

/** What `passk run` prints when it ends: the run's counts, cost and tokens (— when no trial reported any). */
export const summaryBlocks = (s: RunSummary) => [
  heading(`run ${s.runId}: ${s.status}`, 1, s.status === 'completed' ? 'good' : 'warn'),
  table(
    [
      'planned',
      'already recorded',
      'ran',
      'passed',
      'failed',
      'ungraded',
      'infra retries',
      'wall time',
      'cost',
      'tokens in/out',
    ],
    [
      [
        String(s.total),
        String(s.skipped),
        String(s.done),
        String(s.passed),
        String(s.failed),
        String(s.ungraded),
        String(s.retries),
        `${(s.wallMs / 1000).toFixed(1)} s`,
        s.costUsd === 0 ? '—' : usd(s.costUsd), // — : no trial reported a cost
        s.tokens.input === 0 && s.tokens.output === 0 ? '—' : `${s.tokens.input}/${s.tokens.output}`, // none reported
      ],
    ],
  ),
  ...(Object.keys(s.errors).length
    ? [
        text(
          `error kinds: ${Object.entries(s.errors)
            .map(([k, n]) => `${k} ×${n}`)
            .join(', ')}`,
          'warn',
        ),
        ...Object.entries(s.messages).map(([k, m]) => text(`${k}: ${m}`, 'warn')),
      ]
    : []),
  ...(s.stopped
    ? [
        text(
          `stopped: the first ${s.stopped.trials} trials were all ungraded (${s.stopped.kind}): the agent is broken, ` +
            'not wrong, so the rest of the budget was not spent. Fix the agent (its error is above), then run again.',
          'bad',
        ),
        text(
          `${s.done} trial${s.done === 1 ? ' was' : 's were'} recorded` +
            (s.done > s.stopped.trials
              ? `, more than --stop-after ${s.stopped.trials}: the trials already in flight (--concurrency runs several at once) finished and were recorded`
              : '') +
            `; they count against this agent version until taken back: ${passkCommand(`retract --run ${quoteArg(s.runId)} --reason 'broken agent'`)}`,
          'warn',
        ),
      ]
    : []),
];

const span = (i: readonly [number, number] | null | undefined) => (i ? `${pct(i[0])} – ${pct(i[1])}` : '—');

/** What an adaptive run adds: the attempts it took against fixed k, why rows stopped, the first-stage numbers. */
const adaptiveBlocks = (s: AdaptiveSummary) => {
  const f = s.firstStage;
  const k = String(f.first_k);
  return [
    text(
      `${s.status === 'completed' ? 'decided' : 'stopped'} after ${s.attempts} attempts (fixed k would have used ${s.fixedAttempts}: ${s.rows} rows × ${s.adaptive.maxK})`,
      'good',
    ),
    ...(s.gate
      ? [
          text(
            `stopped early: the live gate decided ${s.gate.verdict.toUpperCase()} against ${s.gate.baseline}` +
              (s.gate.broken.length > 0 ? ` (must-not-break ${rowList(s.gate.broken)} broken)` : '') +
              ` in comparison ${s.gate.comparison_id}; the rows still open stopped (gate_decided)`,
            s.gate.verdict === 'pass' ? 'good' : 'bad',
          ),
        ]
      : []),
    text(
      `${s.rounds} rounds · stops: ${Object.entries(s.stops)
        .map(([r, n]) => `${r} ${n}`)
        .join(', ')}`,
    ),
    text(
      `classes: stable-correct ${s.classes.stable_correct}, stable-wrong ${s.classes.stable_wrong}, flip ${s.classes.flip}, unclassified ${s.classes.unclassified}`,
    ),
    table(
      [`first stage: ${k} attempts × ${f.rows} rows`, 'value', '95% interval'],
      [
        ['pass@1', pct(f.pass_at_k['1']), span(f.intervals.pass_at_k['1'])],
        [`pass^${k}`, pct(f.pass_hat_k[k]), span(f.intervals.pass_hat_k[k])],
        ['flip rate', pct(f.flip_rate), span(f.intervals.flip_rate)],
      ],
    ),
  ];
};

export const runCommand = (program: Command): void => {
  program
    .command('run')
    .description(
      'Runs the agent on every row --k times (each trial isolated, with a timeout), grades each output and\n' +
        'records one TrialRecorded per attempt to the configured backend. Infrastructure failures (timeouts,\n' +
        'crashes, 5xx, network) are retried, and when retries run out the trial is recorded ungraded (passed: null),\n' +
        "never as the agent's failure. Re-running the same command resumes: attempts already in the log are skipped.\n" +
        "--confirmations runs instead what the processors' confirmation requests still need from this agent version.\n" +
        'See docs/producers.md for the agent and grader protocols.',
    )
    .requiredOption(
      '--dataset <file>',
      'rows as JSON lines: {"id", "input", "expected"?, "tags"?, "expected_checks"?, "expected_schema"?}',
    )
    .requiredOption(
      '--agent <spec>',
      'a module (agent.ts / .js: default export (input, ctx) => result), http(s)://URL (POST per trial), or cmd:"<command>" (JSON on stdin/stdout)',
    )
    .option('--k <n>', 'attempts per row', positiveInt('--k'), 3)
    .option('--concurrency <n>', 'trials at once', positiveInt('--concurrency'), 8)
    .addOption(
      new Option('--timeout <duration>', 'time limit per trial (e.g. 30s, 2m, 1500ms)')
        .argParser(duration)
        .default(60_000, '60s'),
    )
    .option(
      '--retries <n>',
      'retries of an infrastructure failure per trial',
      nonNegativeInt('--retries'),
      DEFAULT_RUN_RETRY.retries,
    )
    .option(
      '--isolation <mode>',
      'module agents: worker (a fresh module instance per trial, in worker threads) or none (one shared instance)',
      'worker',
    )
    .option('--grader <kind>', 'exact, exact-ci, regex, json-schema, judge, or a grader module path', 'exact')
    .option('--regex-flags <flags>', 'flags for --grader regex, e.g. i')
    .option('--schema <file>', 'JSON Schema for --grader json-schema (rows may carry expected_schema)')
    .option('--rubric <file>', 'rubric for --grader judge')
    .option('--rubric-version <v>', 'rubric version (default: a hash of the rubric)')
    .option(
      '--judge-url <url>',
      'OpenAI-compatible API root of the judge, e.g. http://localhost:8000/v1 (else env PASSK_JUDGE_URL, else judge.url in passk.config.json)',
    )
    .option(
      '--judge-model <model>',
      'judge model (else PASSK_JUDGE_MODEL, else judge.model); the API key comes from PASSK_JUDGE_API_KEY or judge.apiKey',
    )
    .option('--judge-version <v>', 'judge version (default: a hash of model and prompt)')
    .option('--suite <name>', 'suite (default: the dataset file name)')
    .option('--dataset-id <id>', 'dataset id (default: the dataset file name)')
    .option('--dataset-version <v>', 'dataset version (default: a hash of the dataset file)')
    .option(
      '--agent-version <v>',
      "agent version (default: the module's meta.version, else a hash of the module's source, of the command and the files it names (up to 4 MiB each), or of the URL)",
    )
    .option(
      '--run-id <id>',
      'run id (default: derived from suite, dataset version and agent version, so the same command resumes)',
    )
    .option(
      '--confirm <file>',
      'confirmation runs: row ids (one per line, or suite::row) to run --extra more times, in a "confirm-…" run',
    )
    .option('--extra <n>', 'attempts per row for --confirm', positiveInt('--extra'))
    .option(
      '--confirmations',
      "run what the processors' confirmation requests (ConfirmationRequested) still need from this agent version, then stop",
    )
    .option(
      '--follow',
      'with --confirmations: keep running, and run each new confirmation request for this agent version as it arrives, until SIGTERM or Ctrl-C',
    )
    .addOption(
      new Option('--poll <duration>', 'with --follow: how often passk.decisions is checked for new requests')
        .argParser(duration)
        .default(2_000, '2s'),
    )
    .option(
      '--adaptive',
      'adaptive attempts (docs/adaptive.md): a first stage on every row, then one attempt a round to the rows whose class or must-not-break verdict is still open',
    )
    .option('--budget <n>', 'with --adaptive: attempts at most in the whole run', positiveInt('--budget'))
    .option('--max-k <n>', 'with --adaptive: graded attempts at most per row (default 8)', positiveInt('--max-k'))
    .option(
      '--first-k <n>',
      'with --adaptive: first-stage attempts on every row, behind the headline numbers (default 2)',
      positiveInt('--first-k'),
    )
    .option('--no-resume', 'do not read the log for attempts already recorded')
    .option(
      '--stop-after <n>',
      'stop (exit 3) when the first n trials are all ungraded with the same error: a broken agent, not a verdict; 0 = never',
      nonNegativeInt('--stop-after'),
      DEFAULT_STOP_AFTER,
    )
    .option('--json', 'print the summary as JSON (no progress bar)')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk run --dataset examples/refund-agent/refunds.jsonl --agent examples/refund-agent/agent.ts --k 3
  passk run --dataset rows.jsonl --agent http://localhost:3000/agent --k 5 --concurrency 16 --timeout 2m
  passk run --dataset rows.jsonl --agent 'cmd:python3 agent.py' --grader regex
  passk run --dataset rows.jsonl --agent agent.ts --grader judge --rubric rubric.md --judge-url http://localhost:8000/v1 --judge-model qwen2.5
  passk run --dataset rows.jsonl --agent agent.ts --confirm suspects.txt --extra 3
  passk run --dataset rows.jsonl --agent agent.ts --adaptive --budget 500 --max-k 8
  passk run --dataset rows.jsonl --agent baseline.ts --confirmations   # then the same with candidate.ts
  passk run --dataset rows.jsonl --agent candidate.ts --confirmations --follow   # until SIGTERM or Ctrl-C

rows.jsonl and the .ts and .py agents stand for your dataset and agents; the first
example runs the ones in examples/refund-agent. suspects.txt lists row ids, one a
line; rubric.md is the judge's instructions.

Exit codes: 0 every planned trial recorded, 1 the run stopped early (partial), 2 bad input, 3 backend unavailable
or the agent is (its first --stop-after trials all ungraded with the same error).`),
    )
    .action(async (flags: RunFlags, cmd: Command) => {
      if (flags.isolation !== 'worker' && flags.isolation !== 'none')
        throw new InputError('--isolation is worker or none', { field: 'isolation' });
      if (flags.confirm && !flags.extra) throw new InputError('--confirm needs --extra N', { field: 'extra' });
      const adaptiveOnly = (['budget', 'maxK', 'firstK'] as const).find((f) => flags[f] !== undefined);
      if (adaptiveOnly && !flags.adaptive)
        throw new InputError(`--${adaptiveOnly.replace('K', '-k')} goes with --adaptive`, { field: adaptiveOnly });
      if (flags.adaptive && (flags.confirm || flags.confirmations))
        throw new InputError('--adaptive is a run of its own: drop --confirm / --confirmations', {
          field: 'adaptive',
        });
      if (flags.adaptive && cmd.getOptionValueSource('k') === 'cli')
        throw new InputError('--adaptive decides the attempts per row: use --max-k or --budget, not --k', {
          field: 'k',
        });
      if (flags.follow && !flags.confirmations)
        throw new InputError('--follow goes with --confirmations', { field: 'follow' });
      if (flags.confirmations && (flags.confirm || flags.runId))
        throw new InputError(
          '--confirmations takes its rows, attempts and run ids from the requests: drop --confirm and --run-id',
          { field: 'confirmations' },
        );
      const confirmRows = flags.confirm
        ? parseMustNotBreakList(
            await readFile(flags.confirm, 'utf8').catch(() => {
              throw new InputError('cannot read', { file: flags.confirm! });
            }),
            flags.confirm,
          )
        : undefined;
      // flags over env over passk.config.json, as for the rest of the configuration (deploy/config.ts)
      const config = configOf(cmd, {
        ...(flags.judgeUrl ? { judgeUrl: flags.judgeUrl } : {}),
        ...(flags.judgeModel ? { judgeModel: flags.judgeModel } : {}),
      });
      const { url: judgeUrl, model: judgeModel, apiKey: judgeKey, timeoutMs: judgeTimeout } = config.judge;
      const opts: RunOptions = {
        dataset: flags.dataset,
        agent: flags.agent,
        k: flags.k,
        concurrency: flags.concurrency,
        timeoutMs: flags.timeout,
        retry: { ...DEFAULT_RUN_RETRY, retries: flags.retries },
        isolation: flags.isolation,
        resume: flags.resume,
        stopAfter: flags.stopAfter,
        ...(flags.grader ? { grader: flags.grader } : {}),
        ...(flags.regexFlags ? { regexFlags: flags.regexFlags } : {}),
        ...(flags.schema ? { schemaFile: flags.schema } : {}),
        ...(flags.rubric ? { rubricFile: flags.rubric } : {}),
        ...(flags.rubricVersion ? { rubricVersion: flags.rubricVersion } : {}),
        ...(flags.judgeVersion ? { judgeVersion: flags.judgeVersion } : {}),
        judge: {
          ...(judgeUrl ? { baseUrl: judgeUrl } : {}),
          ...(judgeModel ? { model: judgeModel } : {}),
          ...(judgeKey ? { apiKey: judgeKey } : {}),
          ...(judgeTimeout ? { timeoutMs: judgeTimeout } : {}),
        },
        ...(flags.suite ? { suite: flags.suite } : {}),
        ...(flags.datasetId ? { datasetId: flags.datasetId } : {}),
        ...(flags.datasetVersion ? { datasetVersion: flags.datasetVersion } : {}),
        ...(flags.agentVersion ? { agentVersion: flags.agentVersion } : {}),
        ...(flags.runId ? { runId: flags.runId } : {}),
        ...(confirmRows ? { confirm: { rows: confirmRows, extra: flags.extra! } } : {}),
      };
      const bar = progressBar(process.stderr.isTTY && !flags.json ? process.stderr : undefined);
      const stop = new AbortController();
      const onSignal = () => {
        writeStderr('\npassk: stopping: finishing the trials in flight, then recording them\n');
        stop.abort();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const deps = (log: EventLog): RunDatasetDeps => ({
        publisher: log.publisher,
        source: log,
        signal: stop.signal,
        onStart: (s) => {
          if (!flags.json)
            writeStderr(
              `passk: run ${s.runId} · suite ${s.suite} · dataset ${s.datasetVersion} · agent ${s.agentVersion} · ${s.recorded} attempts already recorded\n`,
            );
          if (!flags.json && s.agentVersionNote)
            writeStderr(`passk: ${s.agentVersionNote} (--agent-version names versions yourself)\n`);
        },
        onProgress: (p) => bar.update(p),
      });
      try {
        if (flags.confirmations && flags.follow) {
          await withEventLog(
            cmd,
            (log) =>
              followConfirmations(log, opts, deps(log), {
                pollMs: flags.poll,
                json: flags.json === true,
                signal: stop.signal,
              }),
            config,
          ).catch(exitOnUnavailable);
          return;
        }
        if (flags.confirmations) {
          const summary = await withEventLog(
            cmd,
            async (log) => runConfirmations(await pinDataset(log, opts, flags.json === true), deps(log)),
            config,
          ).catch(exitOnUnavailable);
          bar.stop();
          process.stdout.write(flags.json ? renderJson(summary) : renderTerminal(confirmationBlocks(summary)));
          if (summary.status !== 'completed') process.exitCode = EXIT.failed;
          return;
        }
        if (flags.adaptive) {
          const summary = await withEventLog(
            cmd,
            async (log) =>
              runAdaptive(
                {
                  ...(await pinDataset(log, opts, flags.json === true)),
                  adaptive: {
                    budget: flags.budget ?? null,
                    ...(flags.maxK ? { maxK: flags.maxK } : {}),
                    ...(flags.firstK ? { firstK: flags.firstK } : {}),
                  },
                },
                deps(log),
              ),
            config,
          ).catch(exitOnUnavailable);
          bar.stop();
          process.stdout.write(
            flags.json
              ? renderJson(summary)
              : renderTerminal([
                  ...summaryBlocks(summary),
                  ...adaptiveBlocks(summary),
                  summary.status === 'completed'
                    ? foldedNext(config)
                    : nextCommand(thisCommand(), 'it resumes from the attempts and rounds recorded'),
                ]),
          );
          if (summary.status !== 'completed') process.exitCode = EXIT.failed;
          return;
        }
        const summary = await withEventLog(
          cmd,
          async (log) => runDataset(await pinDataset(log, opts, flags.json === true), deps(log)),
          config,
        ).catch(exitOnUnavailable);
        bar.stop();
        if (summary.stopped) {
          process.stdout.write(flags.json ? renderJson(summary) : renderTerminal(summaryBlocks(summary)));
          process.exitCode = EXIT.unavailable;
          return;
        }
        process.stdout.write(
          flags.json
            ? renderJson(summary)
            : renderTerminal([
                ...summaryBlocks(summary),
                summary.status === 'completed'
                  ? foldedNext(config)
                  : nextCommand(thisCommand(), 'it resumes, skipping the attempts already recorded'),
              ]),
        );
        if (summary.status !== 'completed') process.exitCode = EXIT.failed;
      } finally {
        bar.stop();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
};
