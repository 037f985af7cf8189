import type { Command } from 'commander';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors, type ProcessorsRun } from '../../deploy/processors.ts';
import { shareStore } from '../../deploy/holdStore.ts';
import { boundHeapGrowth } from '../../deploy/heap.ts';
import { openStore, type Store } from '../../deploy/store.ts';
import type { EventLog } from '../../processors/ports.ts';
import { PipelineError } from '../../schemas/errors.ts';
import { gateHistory, StoreLocked, suiteAgentVersions, type Querier } from '../../sinks/clickhouse/index.ts';
import { dashboardDataWithRounds } from './dashboardData.ts';
import {
  createDashboardServer,
  DashboardConfigError,
  type ConfirmAnswer,
  type ConfirmBody,
  type DashboardServer,
} from '../../web/index.ts';
import { createIngestMetrics, createIngestRoutes, ingestRegistry } from '../../producers/ingest/index.ts';
import { metricsRoute, processorRegistry } from '../../deploy/metrics.ts';
import { otlpReceiverOptions } from '../../deploy/otlp.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { confirmFailure } from '../../producers/review/index.ts';
import { agentCheck, DASHBOARD_OVERRIDE } from './confirmAgent.ts';
import { EXIT } from '../exitCodes.ts';
import { heading, passkCommand, text } from '../format/doc.ts';
import { gateLinks } from '../format/links.ts';
import { renderTerminal, writeStderr } from '../format/render.ts';
import { failureText } from '../format/storeHeld.ts';
import { openBrowser } from '../openBrowser.ts';
import { readPolicyFile } from './sample.ts';
import type { Redactor } from '../../producers/redaction/index.ts';
import { epilog } from '../format/helpText.ts';
import { REDACT_HELP, redactFlag, redactorsOf } from './redactFlags.ts';
import { configOf } from '../context.ts';
import { logTrials } from '../../deploy/knownTrials.ts';

type ServeFlags = {
  host: string;
  port: string;
  token?: string;
  ingestToken?: string;
  otlpPolicy?: string;
  redact?: [string, string][];
  process: boolean;
  open?: boolean;
  json?: boolean;
  exitAfterFailure: string;
};

/** The dashboard's confirm action: the same FailureConfirmed, and the same agent check, as `passk review --confirm`. */
const confirmFrom =
  (log: EventLog, store: Querier, redactors: readonly Redactor[]) =>
  async (b: ConfirmBody): Promise<Omit<ConfirmAnswer, 'trace_id' | 'dataset_id'>> => {
    const check = agentCheck({
      dataset: b.dataset_id,
      anyAgent: b.any_agent === true,
      versionsOf: (suite) => suiteAgentVersions(store, { suite }),
      override: DASHBOARD_OVERRIDE,
    });
    const { event, published, trace } = await confirmFailure(
      log,
      {
        traceId: b.trace_id,
        datasetId: b.dataset_id,
        expected: b.expected,
        reviewer: b.reviewer,
        ...(b.note ? { note: b.note } : {}),
        redactors,
      },
      check.vet,
    );
    const checked = check.checked(trace);
    return {
      event_id: event.event_id,
      published,
      agent_version: trace.agent_version,
      ...(checked ? { agent_check: checked } : {}),
    };
  };

export const serveCommand = (program: Command): void => {
  program
    .command('serve')
    .description(
      'Serves the dashboard: Overview, Compare, Gates, Production, Judges and Datasets, read from the store through\n' +
        'its typed queries, updated live (server-sent events) as events arrive. By default it also runs the processors\n' +
        '(the embedded store can be held by one process only), so trials that runners, importers or the SDK publish\n' +
        'from other processes show up on the page. Binds 127.0.0.1; any other address needs a token. See docs/dashboard.md.\n\n' +
        'It opens on the latest gate verdict and prints deep links to it and to its first failing row. With --ingest-token,\n' +
        'the Production view can also confirm a sampled failure (the write token is asked for on the page): the same\n' +
        'FailureConfirmed that passk review --confirm publishes, after the same check of the agent version that\n' +
        "recorded the trace (refused when it has no trials on the dataset's suite; a box on the page overrides it).",
    )
    .option('--host <host>', 'address to bind (anything but loopback needs --token)', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', '7357')
    .option('--token <token>', 'token every request must carry, 16+ characters (env PASSK_DASHBOARD_TOKEN)')
    .option(
      '--ingest-token <token>',
      'write token of the ingest API at /api/v1/* and /v1/traces, and of the confirm action (env PASSK_INGEST_TOKEN); without it, writes are refused',
    )
    .option('--otlp-policy <file>', 'sampling policy of OTLP traces at /v1/traces, as passk sample --policy')
    .option('--redact <name=regex>', REDACT_HELP, redactFlag)
    .option('--no-process', 'only read the store; the processors run elsewhere (a ClickHouse server)')
    .option('--open', 'open the dashboard in a browser, on the latest gate verdict')
    .option('--json', 'print {"url", "gate_url", "row_url"} as JSON once listening (for scripts)')
    .option(
      '--exit-after-failure <seconds>',
      'when the processors crash: show it on the page this long, then exit non-zero',
      '30',
    )
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk serve                                   # http://127.0.0.1:7357/
  passk serve --port 0 --json                   # any free port; prints {"url": "http://127.0.0.1:…/", …}
  PASSK_DASHBOARD_TOKEN=$(openssl rand -hex 16) passk serve --host 0.0.0.0
  CLICKHOUSE_URL=http://ch:8123 passk serve --no-process

When the processors crash (the store or the log fails under them), the page's
live dot turns red with the reason, /healthz answers 503, and passk serve exits
non-zero after --exit-after-failure seconds (at once on SIGINT/SIGTERM) rather
than serve numbers that no longer move.

Exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad flag or config (e.g. a non-loopback
  address without a token), 3 the event log or the store is unreachable or held
  by another process (also when the processors stop on it), 4 the processors
  stopped on an unexpected error.`),
    )
    .action(async (flags: ServeFlags, cmd: Command) => {
      const graceS = Number(flags.exitAfterFailure);
      if (!Number.isFinite(graceS) || graceS < 0) {
        writeStderr(`passk: --exit-after-failure must be a number of seconds >= 0, got "${flags.exitAfterFailure}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        writeStderr(`passk: --port must be an integer in 0–65535, got "${flags.port}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const config = configOf(cmd, { token: flags.token });
      const token = config.dashboard.token;
      const ingestToken = flags.ingestToken ?? config.ingest.token;
      let log: EventLog | undefined;
      let store: Store | undefined;
      let processors: ProcessorsRun | undefined;
      let server: DashboardServer | undefined;
      let unshare: (() => Promise<void>) | undefined;
      let stopping = false;
      let routes: ReturnType<typeof createIngestRoutes> | undefined;
      let otlp: ReturnType<typeof otlpReceiverOptions> | undefined;
      const policy = flags.otlpPolicy === undefined ? undefined : await readPolicyFile(flags.otlpPolicy);
      const shutdown = async () => {
        stopping = true;
        await unshare?.();
        await server?.close();
        await routes?.close();
        otlp?.close();
        processors?.stop();
        await processors?.done.catch(() => undefined);
        await store?.close();
        await log?.close();
      };
      try {
        // its dashboard's answers are built in Node: the heap stays near what they keep alive (deploy/heap.ts)
        boundHeapGrowth();
        store = await openStore(config);
        unshare = await shareStore(config, store, 'serve', flags.process);
        if (flags.process || ingestToken) log = await openEventLog(config);
        if (flags.process && log) {
          processors = await startProcessors(config, { log, instanceId: `serve-${process.pid}` });
        }
        if (log) {
          otlp = otlpReceiverOptions(config, policy, (line) => writeStderr(`passk serve: ${line}\n`));
          routes = createIngestRoutes({
            publisher: log.publisher,
            knownTrials: logTrials(log),
            token: ingestToken,
            redactors: redactorsOf(config, flags.redact),
            otlp: otlp.options,
          });
        }
        // GET /metrics: the ingest API's (when mounted) and the processors' (when running), one registry.
        const registry = ingestRegistry(routes?.metrics ?? createIngestMetrics());
        const run = processors;
        if (run) processorRegistry(run.stats, registry);
        const metrics = metricsRoute(registry);
        const ingest = routes;
        const served = async (req: IncomingMessage, res: ServerResponse, pathname: string) =>
          (await metrics(req, res, pathname)) || (ingest ? ingest(req, res, pathname) : false);
        server = await createDashboardServer({
          data: dashboardDataWithRounds(store.client, config, log),
          // the dashboard's suggested commands are this CLI's, with the flags this command was given
          command: passkCommand,
          timeouts: config.http,
          host: flags.host,
          port,
          ...(token ? { token } : {}),
          routes: served,
          ...(log
            ? {
                review: {
                  token: ingestToken,
                  confirm: confirmFrom(log, store.client, redactorsOf(config, flags.redact)),
                },
              }
            : {}),
        });
      } catch (e) {
        await shutdown();
        const known = e instanceof StoreLocked || (e instanceof PipelineError && e.retriable);
        if (!known && !(e instanceof DashboardConfigError)) throw e;
        writeStderr(failureText(e));
        process.exitCode = e instanceof DashboardConfigError ? EXIT.usage : EXIT.unavailable;
        return;
      }
      // The latest gate, so the first thing printed (and opened) is the decision; a store without gates has none.
      const [latest] = await gateHistory(store.client, { limit: 1 }).catch(() => []);
      const links = latest ? gateLinks(server.url, latest) : undefined;
      process.stdout.write(
        flags.json
          ? `${JSON.stringify({ url: server.url, gate_url: links?.gate ?? null, row_url: links?.row?.url ?? null })}\n`
          : renderTerminal([
              heading(`passk dashboard: ${server.url}`, 2, 'good'),
              ...(latest && links
                ? [
                    text(
                      `latest gate: ${latest.verdict.toUpperCase()}, ${latest.candidate} against ${latest.baseline}: ${links.gate}`,
                      latest.verdict === 'pass' ? 'good' : 'bad',
                    ),
                    ...(links.row ? [text(`first failing row ${links.row.id}: ${links.row.url}`)] : []),
                  ]
                : []),
              text('Ctrl-C to stop.', 'dim'),
            ]),
      );
      if (flags.open) {
        const why = await openBrowser(links?.gate ?? server.url);
        if (why) writeStderr(`passk: could not open a browser (${why}); open the link above\n`);
      }
      const live = server;
      let crashed: unknown;
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => ((stopping = true), resolve()));
        process.once('SIGTERM', () => ((stopping = true), resolve()));
        // the processors end only when stopped: ending (or failing) on their own means the page no longer moves
        processors?.done.then(
          () => fail(new Error('the processors ended on their own')),
          (e: unknown) => fail(e),
        );
        function fail(e: unknown) {
          if (stopping || crashed !== undefined) return; // stopped by a signal: not a crash
          crashed = e;
          const message = e instanceof Error ? e.message : String(e);
          live.setStatus({ state: 'failed', message });
          writeStderr(
            `passk: the processors stopped: ${message}\n` +
              `passk: the dashboard says so; exiting in ${graceS} s (the numbers no longer move)\n`,
          );
          setTimeout(resolve, graceS * 1000).unref();
        }
      });
      await shutdown();
      if (crashed !== undefined)
        process.exitCode = crashed instanceof PipelineError && crashed.retriable ? EXIT.unavailable : EXIT.error;
    });
};
