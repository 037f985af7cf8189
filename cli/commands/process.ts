import type { Command } from 'commander';
import { shareStore } from '../../deploy/holdStore.ts';
import { startProcessors, type ProcessorsRun } from '../../deploy/processors.ts';
import { describeDrift } from '../../deploy/drift.ts';
import { openStore, type Store } from '../../deploy/store.ts';
import { numbersOf, type ReportedSummary } from '../../processors/folds/versionSummary.ts';
import type { TrialProgress } from '../../processors/index.ts';
import { PipelineError } from '../../schemas/errors.ts';
import { StoreLocked } from '../../sinks/clickhouse/errors.ts';
import { heading, passkCommand, table, text } from '../format/doc.ts';
import { curve, pct } from '../format/numbers.ts';
import { renderJson, renderTerminal, writeStderr } from '../format/render.ts';
import { failureText } from '../format/storeHeld.ts';
import { EXIT } from '../exitCodes.ts';
import { takeEarlySignal } from '../signals.ts';
import { epilog } from '../format/helpText.ts';
import { configOf } from '../context.ts';
import { readAdaptiveRounds } from '../../producers/adaptiveRounds.ts';

type ProcessFlags = {
  untilCaughtUp?: boolean;
  store: boolean;
  minAttempts?: string;
  batchWindowMs?: string;
  metricsPort?: string;
  metricsHost: string;
  json?: boolean;
};

/** Lag per partition from the latest progress of each, summed. */
const lagTracker = () => {
  const lag = new Map<string, number>();
  return {
    add: (p: TrialProgress) => {
      for (const l of p.lag) lag.set(`${l.topic}[${l.partition}]`, l.lag);
    },
    total: () => [...lag.values()].reduce((a, b) => a + b, 0),
    parts: () => [...lag].map(([k, v]) => `${k} ${v}`).join(', '),
  };
};

/**
 * A version's headline numbers as `passk report` gives them: an adaptive version's from each row's first-stage
 * attempts, classified at the first stage's k (docs/adaptive.md), any other's from its counted attempts.
 */
const headlineOf = (r: ReportedSummary) =>
  r.first_stage ? numbersOf(r.first_stage.summary, { minAttempts: r.first_stage.k }) : numbersOf(r.summary);

/** The fields `passk report --json` takes from an adaptive version's first stage, and the stage's k. */
const firstStageHeadline = (k: number, h: ReturnType<typeof headlineOf>) => ({
  mean_accuracy: h.mean_accuracy,
  k_max: h.k_max,
  pass_at_k: h.pass_at_k,
  pass_hat_k: h.pass_hat_k,
  rows_at_k: h.rows_at_k,
  flip_rate: h.flip_rate,
  first_stage: { k, rows: h.classified, flips: h.classes.flip },
});

/** The line that says which attempts the table leaves out, as `passk report` says it; none when there are none. */
const confirmationNote = (reported: readonly ReportedSummary[]) => {
  const left = reported.reduce((sum, r) => sum + r.confirmation_attempts, 0);
  return left === 0
    ? []
    : [
        text(
          `${left} attempt${left === 1 ? '' : 's'} of confirmation runs left out, as \`passk report\` leaves them out (\`report --include-confirmation\` counts them)`,
        ),
      ];
};

const summaryBlocks = (
  reported: readonly ReportedSummary[],
  totals: { records: number; trials: number; decisions: number },
) => {
  const rows = reported.map((r) => {
    const { summary: s } = r;
    const n = numbersOf(s);
    const head = headlineOf(r);
    return [
      s.suite,
      s.dataset_version,
      s.agent_version,
      String(n.rows),
      String(n.trials),
      pct(head.mean_accuracy),
      curve(Object.values(head.pass_hat_k).map((x) => pct(x))),
      pct(head.flip_rate),
    ];
  });
  // nothing new to fold: the versions are those restored (what the runs before this one folded), said as such
  const restored = reported.length === 1 ? 'the version as restored' : `the ${reported.length} versions as restored`;
  const consumed =
    totals.records > 0
      ? `${totals.records} trial records consumed, ${totals.trials} trials folded, ${totals.decisions} events decided; everything consumed is durable and committed`
      : reported.length === 0
        ? `nothing to fold yet: no trial record has reached the log, ${totals.decisions} events decided`
        : `nothing new to fold: no trial record since the last run, ${totals.decisions} events decided; ${restored}`;
  return [
    heading('passk process'),
    text(consumed),
    ...(rows.length === 0
      ? []
      : [table(['suite', 'dataset', 'agent version', 'rows', 'trials', 'mean acc.', 'pass^1..K', 'flip rate'], rows)]),
    ...confirmationNote(reported),
  ];
};

export const processCommand = (program: Command): void => {
  program
    .command('process')
    .description(
      'Consumes passk.trials from the configured event log (the embedded log in ./.passk, or Kafka), folds\n' +
        'per-row reliability state, publishes it to the passk.rowstate changelog and writes trials and row\n' +
        'states to the store. Offsets are committed only once the changelog and the store writes are durable.\n' +
        'Shows progress and lag on stderr. SIGTERM or Ctrl-C stops cleanly: what is in flight is made durable\n' +
        'and committed first. Several `passk process` share the work as one consumer group. See docs/processors.md.\n' +
        'At start, when the store lacks what the log committed (deleted, emptied, a part or its metadata lost, or an\n' +
        'earlier --no-store run), it first rebuilds the store by replaying the log (as passk rebuild does).',
    )
    .option('--until-caught-up', 'exit 0 once every partition’s lag is zero and everything is durable')
    .option('--no-store', 'do not write to the store (changelog only; the next run with the store rebuilds it)')
    .option('--min-attempts <n>', 'graded attempts before a row is classified (default 3)')
    .option(
      '--batch-window-ms <ms>',
      'how long a batch gathers before it is made durable: freshness vs throughput (default PASSK_BATCH_WINDOW_MS or 500)',
    )
    .option('--metrics-port <port>', 'serve GET /metrics (Prometheus text format) on this port (0 = any free port)')
    .option('--metrics-host <host>', 'address of the metrics server', '127.0.0.1')
    .option('--json', 'print the final summary as JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk process                      # run until SIGTERM or Ctrl-C
  passk process --until-caught-up --metrics-port 0
  passk process --until-caught-up    # batch: process what is there, then exit
  PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8080/apis/ccompat/v7 passk process

Exit codes: 0 ok, 2 bad flag or config, 3 the event log or the store is unreachable or held by another process.`),
    )
    .action(async (flags: ProcessFlags, cmd: Command) => {
      const config = configOf(cmd);
      const minAttempts = flags.minAttempts === undefined ? undefined : Number(flags.minAttempts);
      if (minAttempts !== undefined && !(Number.isInteger(minAttempts) && minAttempts >= 1)) {
        writeStderr(`passk: --min-attempts must be a positive integer, got "${flags.minAttempts}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const windowMs = flags.batchWindowMs === undefined ? undefined : Number(flags.batchWindowMs);
      if (windowMs !== undefined && !(Number.isInteger(windowMs) && windowMs >= 0)) {
        writeStderr(`passk: --batch-window-ms must be a non-negative integer, got "${flags.batchWindowMs}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const metricsPort = flags.metricsPort === undefined ? undefined : Number(flags.metricsPort);
      if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)) {
        writeStderr(`passk: --metrics-port must be an integer in 0–65535, got "${flags.metricsPort}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const lag = lagTracker();
      let shownAt = 0;
      let records = 0;
      let trials = 0;
      let run: ProcessorsRun | undefined;
      let rounds: ReadonlyMap<string, number> = new Map();
      let shared: Store | undefined;
      let unshare: (() => Promise<void>) | undefined;
      // Stop signals are ours from here, before the processors start (restoring state and joining groups takes a
      // while): one that comes while they start stops them as soon as they have.
      if (takeEarlySignal()) return; // stopped before anything started: nothing to finish
      let stopAsked = false;
      let signals = 0;
      const onSignal = (name: string) => {
        if (++signals > 1) process.exit(EXIT.error); // a second signal: give up at once (nothing durable is lost)
        writeStderr(`passk process: ${name}: finishing what is in flight, then committing\n`);
        stopAsked = true;
        run?.stop();
      };
      process.on('SIGTERM', () => onSignal('SIGTERM'));
      process.on('SIGINT', () => onSignal('SIGINT'));
      // Said at once: opening the log and the store and restoring the folds' state takes seconds (13 s on a busy
      // machine over a large store) before the first progress line.
      const where = config.backend === 'kafka' ? 'Kafka' : `the embedded log and store in ${config.dataDir}`;
      writeStderr(`passk process: starting: opening ${where}, restoring the processors' state\n`);
      try {
        run = await startProcessors(config, {
          untilCaughtUp: flags.untilCaughtUp ?? false,
          store: flags.store,
          ...(minAttempts ? { minAttempts } : {}),
          ...(windowMs !== undefined ? { maxWaitMs: windowMs } : {}),
          // the adaptive runs' first stages, read on the run's own log before it closes (not on a second one)
          atEnd: async (log) => {
            rounds = await readAdaptiveRounds(log).catch(() => new Map<string, number>());
          },
          onProgress: (p) => {
            lag.add(p);
            records += p.records;
            trials += p.trials;
            if (Date.now() - shownAt < 1_000) return;
            shownAt = Date.now();
            writeStderr(
              `passk process: ${records} records, ${trials} trials durable and committed · lag ${lag.total()} (${lag.parts()})\n`,
            );
          },
          onRebuild: (e) => {
            if (e.kind === 'start')
              writeStderr(
                `passk process: the store lacks what the log holds (${describeDrift(e.drift).join('; ')}): rebuilding it from the log first\n`,
              );
            else if (e.kind === 'progress') {
              if (Date.now() - shownAt < 1_000) return;
              shownAt = Date.now();
              writeStderr(`passk process: rebuilding the store: ${e.done} of ${e.total} records replayed\n`);
            } else
              writeStderr(
                `passk process: store rebuilt from the log: ${e.result.records} records, ${e.result.trials} trials${e.result.after.damaged ? `; still ${describeDrift(e.result.after).join('; ')} (${passkCommand('check')} lists the rows)` : ''}\n`,
              );
          },
          onDecision: (d) => {
            for (const e of d.emitted)
              if (e.type === 'GateEvaluated')
                writeStderr(
                  `passk process: gate ${e.gate_id}: ${e.verdict} (${e.baseline} → ${e.candidate})${e.repeated_verdict ? ', a repeated verdict on this candidate' : ''}\n`,
                );
              else if (e.type === 'ConfirmationRequested')
                writeStderr(
                  `passk process: confirmation runs requested for ${e.comparison_id}: ${e.rows.length} row(s)\n`,
                );
              else if (e.type === 'WindowAlertRaised') writeStderr(`passk process: alert: ${e.message}\n`);
          },
        });
        writeStderr(
          `passk process: started: consuming trials, datasets and decisions${flags.untilCaughtUp ? ' until caught up' : ' until SIGTERM or Ctrl-C'}\n`,
        );
        if (metricsPort !== undefined) {
          // prom-client is loaded only for a process that serves its metrics
          const { processorRegistry, startMetricsServer } = await import('../../deploy/metrics.ts');
          const metrics = await startMetricsServer({
            registry: processorRegistry(run.stats),
            host: flags.metricsHost,
            port: metricsPort,
          });
          writeStderr(`passk process: metrics at ${metrics.url}\n`);
          void run.done.finally(() => metrics.close()).catch(() => undefined);
        }
        if (flags.store) {
          // the processors hold the embedded store now: other commands read it through this process
          shared = await openStore(config, { migrate: false });
          unshare = await shareStore(config, shared, 'process');
        }
      } catch (e) {
        if (e instanceof StoreLocked || (e instanceof PipelineError && e.retriable)) {
          writeStderr(failureText(e));
          // exit, not return: a Kafka client that failed to connect (a broker cut off at start-up) can leave a
          // retry timer behind, which kept the process alive doing nothing, so no supervisor restarted it (found
          // by the fault campaign, docs/reliability.md)
          process.exit(EXIT.unavailable);
        }
        throw e;
      }
      if (stopAsked) run.stop();
      const totals = await run.done.finally(async () => {
        await unshare?.();
        await shared?.close();
      });
      // the rows this run holds: restored and folded, so a run with nothing new gives the same versions as the last
      // a version whose every run was retracted holds nothing: gone, as report --from-store and the dashboard say
      // an adaptive version's headline numbers from its runs' first stage, as their rounds on the log record it (as
      // report --from-store and compare --from-store read it; read at the run's end, `atEnd` above); the default
      // --first-k where the log has no rounds
      const reported = run
        .reported(rounds)
        .filter((r) => r.summary.rows + r.summary.trials + r.summary.ungraded + r.confirmation_attempts > 0);
      const versions = reported.map((r) => ({
        suite: r.summary.suite,
        dataset_version: r.summary.dataset_version,
        agent_version: r.summary.agent_version,
        ...numbersOf(r.summary),
        ...(r.first_stage ? firstStageHeadline(r.first_stage.k, headlineOf(r)) : {}),
        confirmation_attempts: { count: r.confirmation_attempts, counted: false },
      }));
      const out = flags.json
        ? renderJson({ ...totals, lag: lag.total(), versions })
        : renderTerminal(summaryBlocks(reported, totals));
      // Everything is durable and committed. Exit explicitly: a Kafka client closed mid-rebalance can leave a
      // reconnect timer behind that would keep the process alive.
      process.stdout.write(out, () => process.exit(EXIT.ok));
    });
};
