import { rmSync } from 'node:fs';
import { storeHolder } from '../../deploy/storeOwner.ts';
import { join } from 'node:path';
import { MultiBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import type { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { openStore } from '../../deploy/store.ts';
import type { DemoPipeline, DemoProgress } from '../../demo/pipeline.ts';
import { runDemo, type DemoResult, type GateSummary } from '../../demo/story.ts';
import { PipelineError } from '../../schemas/errors.ts';
import { StoreLocked } from '../../sinks/clickhouse/index.ts';
import { dashboardDataWithRounds } from './dashboardData.ts';
import { createDashboardServer, DashboardConfigError } from '../../web/index.ts';
import { divergentCheck } from '../format/compareDoc.ts';
import { heading, list, passkCommand, table, text, type Block } from '../format/doc.ts';
import { pct, pctInterval, rowList } from '../format/numbers.ts';
import { progressBarSize, renderJson, renderTerminal, writeStderr } from '../format/render.ts';
import { failureText } from '../format/storeHeld.ts';
import { EXIT } from '../exitCodes.ts';
import { gateLinks } from '../format/links.ts';
import { unprotectedLine } from '../format/gateDoc.ts';
import { openBrowser } from '../openBrowser.ts';
import { epilog } from '../format/helpText.ts';
import { configOf } from '../context.ts';

type DemoFlags = {
  serve: boolean;
  open?: boolean;
  json?: boolean;
  host: string;
  port: string;
  token?: string;
  concurrency: string;
};

const numbers = (r: DemoResult): Block => {
  const [b, c] = r.numbers;
  const row = (
    label: string,
    pick: (v: DemoResult['numbers'][number]) => { value: number | null; interval: readonly [number, number] | null },
  ) => [label, ...[b, c].map((v) => (v ? `${pct(pick(v).value)}  (${pctInterval(pick(v).interval)})` : '—'))];
  return table(
    ['', `${r.baseline} (baseline)`, `${r.candidate} (candidate)`],
    [
      row('mean accuracy', (v) => v.mean_accuracy),
      row(`pass^${r.k}`, (v) => v.pass_hat_k),
      row('flip rate', (v) => v.flip_rate),
      ['evidence', ...[b, c].map((v) => (v ? `${v.rows} rows × ${v.attempts_per_row} attempts` : '—'))],
    ],
  );
};

/** A gate's lines in the demo's story: its verdict, its rules, the must-not-break rows it cannot protect (as `passk gate`
 * says them: the demo's passing next gate had two, said only by the dashboard) and the decision it comes from. */
export const gateBlocks = (g: GateSummary, title: string): Block[] => {
  const unprotected = unprotectedLine(g.not_protected);
  return [
    heading(
      `${title}: ${g.verdict.toUpperCase()} — ${g.baseline} → ${g.candidate} on dataset ${g.dataset_version}`,
      2,
      g.verdict === 'pass' ? 'good' : 'bad',
    ),
    ...g.reasons.map((x) =>
      text(
        `  ${x.passed ? '✓' : '✗'} ${x.detail}${x.rows.length ? `: ${x.rows.join(', ')}` : ''}`,
        x.passed ? 'good' : 'bad',
      ),
    ),
    ...(unprotected ? [text(`  ! ${unprotected}`, 'warn')] : []),
    text(`  decided by the processors: GateEvaluated ${g.event_id} on comparison ${g.gate_id}`, 'dim'),
  ];
};

/** Who asked for the confirmation runs: the processors, on the comparison the demo declared. */
const requestedBy = (g: GateSummary): Block =>
  text(
    g.confirmation
      ? `The processors asked for these runs (ConfirmationRequested ${g.confirmation.event_id}): ${g.confirmation.attempts} more attempts of both versions on each row${g.confirmation.must_not_break ? `, ${g.confirmation.must_not_break.attempts} on must-not-break ${g.confirmation.must_not_break.rows.join(', ')}` : ''}, run ${g.confirmation.run_id}.`
      : 'The processors asked for no confirmation runs: no row was stable-correct on the baseline only.',
    'dim',
  );

/** Deep links to the demo's first gate (it fails) and the row it failed on. */
const demoLinks = (r: DemoResult, url: string) =>
  gateLinks(url, { ...r.gate, suite: r.suite, dataset_version: r.gate.dataset_version });

const linkLines = (l: ReturnType<typeof demoLinks>): Block[] => [
  text(`The failing gate: ${l.gate}`),
  ...(l.row ? [text(`The regressed row ${l.row.id}: ${l.row.url}`)] : []),
];

export const demoBlocks = (r: DemoResult, url: string | null): Block[] => {
  const confirmed = r.regressions.filter((x) => x.outcome === 'confirmed_regression');
  const next = r.next_gate;
  const prod = r.production;
  return [
    heading(
      `passk demo — ${r.suite}: ${r.dataset.rows} labeled rows, ${r.dataset.must_not_break} must-not-break, ${r.k} attempts per row per version`,
    ),
    text(
      `${r.events.trials} trials through runner → event log → processors → store; seed ${r.seed}; ${(r.wall_ms / 1000).toFixed(1)}\u00a0s`,
      'dim',
    ),
    text(''),
    heading('The three numbers, side by side (95% intervals)', 2),
    numbers(r),
    list(
      `Became stable-correct (${r.became_stable_correct.length}):`,
      r.became_stable_correct.length ? [rowList(r.became_stable_correct, 40)] : [],
      'good',
    ),
    list(
      `Stable-correct on the baseline, not on the candidate (${r.lost_stable_correct.length}):`,
      r.lost_stable_correct.length ? [rowList(r.lost_stable_correct, 40)] : [],
      r.lost_stable_correct.length ? 'bad' : undefined,
    ),
    text(''),
    heading('Confirmation runs on the suspected regressions', 2),
    requestedBy(r.gate),
    table(
      ['row', 'must-not-break', 'baseline', 'candidate', 'outcome', 'first divergent check'],
      r.regressions.map((x) => [
        x.row_id,
        x.must_not_break ? { text: 'yes', tone: 'warn' } : '',
        `${x.baseline.c}/${x.baseline.n} right`,
        `${x.candidate.c}/${x.candidate.n} right`,
        { text: x.outcome.replaceAll('_', ' '), tone: x.outcome === 'confirmed_regression' ? 'bad' : 'dim' },
        x.first_divergence
          ? `${divergentCheck(x.first_divergence)}: ${x.first_divergence.baseline.map((a) => `${String(a.answer)}×${a.count}`).join(' ')} → ${x.first_divergence.candidate.map((a) => `${String(a.answer)}×${a.count}`).join(' ')}`
          : '',
      ]),
    ),
    text(
      `${confirmed.length} confirmed regressions; each diverges first at the check named above: a specific instruction to inspect.`,
    ),
    text(''),
    ...gateBlocks(r.gate, 'Gate'),
    text(''),
    heading(`Production: ${prod.agent_version} live, ${prod.requests} requests, ${prod.sampled} sampled`, 2),
    text(
      `${prod.failed_sampled} sampled traces failed the audit; ${prod.repeated_inputs_that_flipped} repeated ${prod.repeated_inputs_that_flipped === 1 ? 'input got' : 'inputs got'} different answers. ` +
        `Confirmed failure: trace ${prod.confirmed_failure.trace_id} (${prod.confirmed_failure.output}, expected ${prod.confirmed_failure.expected})` +
        (prod.confirmed_failure.row_id
          ? ` → must-not-break row ${prod.confirmed_failure.row_id} in dataset ${prod.confirmed_failure.dataset_version}`
          : ' → no new dataset version appeared (see the processors)'),
    ),
    ...(next
      ? [
          text(''),
          ...gateBlocks(next, 'Next gate'),
          text(
            next.picked_up
              ? `It picked up ${next.picked_up.row_id}: ${next.must_not_break_rows} must-not-break rows now; on it the baseline is ${next.picked_up.baseline?.replaceAll('_', '-')}, the candidate ${next.picked_up.candidate?.replaceAll('_', '-')}. ` +
                  'From now on no later candidate ships if it breaks it.'
              : 'The new row was not found in the next gate.',
          ),
        ]
      : [text('No next gate: the confirmed failure did not reach a new dataset version.', 'warn')]),
    ...(url
      ? [
          text(''),
          heading(`Dashboard: ${url}`, 2, 'good'),
          ...linkLines(demoLinks(r, url)),
          text('Ctrl-C to stop.', 'dim'),
        ]
      : []),
  ];
};

/** Progress bars on a terminal; one line per finished stage otherwise; nothing with --json unless stderr is a terminal. */
const progressReporter = (json: boolean) => {
  if (!process.stderr.isTTY) {
    const done = new Set<string>();
    return {
      update: (p: DemoProgress) => {
        const key = `${p.stage}:${p.label}`;
        if (json || p.done < p.total || done.has(key)) return;
        done.add(key);
        writeStderr(`passk demo: ${p.stage} · ${p.label} · ${p.done}/${p.total}\n`);
      },
      stop: () => {},
    };
  }
  const barsize = progressBarSize(60);
  // what is left of the line for the label: ' {stage 12} |{bar}| {value}/{total} ' takes barsize + 28 at most
  const fit = (label: string) => {
    const room = (process.stderr.columns ?? 80) - barsize - 29;
    return label.length <= room ? label : `${label.slice(0, Math.max(0, room - 1))}…`;
  };
  const bars = new MultiBar(
    {
      format: ' {stage} |{bar}| {value}/{total} {label}',
      barsize,
      hideCursor: true,
      clearOnComplete: false,
      stream: process.stderr,
    },
    Presets.shades_classic,
  );
  const byKey = new Map<string, ReturnType<MultiBar['create']>>();
  return {
    update: (p: DemoProgress) => {
      const key = `${p.stage}:${p.label}`;
      const bar = byKey.get(key) ?? bars.create(p.total, 0, { stage: p.stage.padEnd(12), label: fit(p.label) });
      byKey.set(key, bar);
      bar.setTotal(p.total);
      bar.update(p.done, { stage: p.stage.padEnd(12), label: fit(p.label) });
    },
    stop: () => bars.stop(),
  };
};

/**
 * The demo never writes into your own data: it uses `<data-dir>/demo` (the embedded log and chDB store), emptied first
 * so every run starts from nothing (`passk --data-dir .passk/demo serve` shows it again later); on a ClickHouse
 * server the database `<database>_demo`, and on Kafka a topic namespace of its own per run (`demoNamespace`).
 */
export const demoConfig = (config: PasskConfig): PasskConfig => {
  const dataDir = join(config.dataDir, 'demo');
  const holder = storeHolder(dataDir);
  if (holder)
    throw new PipelineError(
      `${dataDir} is in use by ${holder}; the demo empties that directory first, so it will not start while another process holds it. Stop that process, or give the demo another --data-dir`,
      { retriable: true },
    );
  rmSync(dataDir, { recursive: true, force: true });
  if (!config.clickhouse.url) return { ...config, dataDir };
  return { ...config, dataDir, clickhouse: { ...config.clickhouse, database: `${config.clickhouse.database}_demo` } };
};

/**
 * On Kafka the demo cannot empty anything, so each run gets topics and consumer groups of its own
 * (`passk-demo-<time>.passk.trials`, …): a run never reads a previous run's events or committed offsets.
 */
export const demoNamespace = (now: number = Date.now()): string => `passk-demo-${now.toString(36)}.`;

export const demoCommand = (program: Command): void => {
  program
    .command('demo')
    .description(
      'Runs a simulated refund-review agent (baseline prompt-v1, candidate prompt-v2) 3 times on each of 200 labeled\n' +
        'rows through the real pipeline (runner → event log → processors → store), declares the comparison, runs the\n' +
        'confirmation runs the processors ask for, and prints the three numbers side by side with intervals, the two\n' +
        "lists, the first divergent check of each confirmed regression and the processors' gate verdict. Then a day of\n" +
        'sampled production traffic, one confirmed failure that becomes a must-not-break row, and the next gate that\n' +
        'picks it up (declared and decided the same way). Then it serves the dashboard.\n' +
        'Embedded (default): everything in <data-dir>/demo, emptied first. With PASSK_BACKEND=kafka and CLICKHOUSE_URL\n' +
        'the same loop runs on Kafka (topics passk-demo-<time>.passk.*, new each run) and a ClickHouse server\n' +
        '(database <database>_demo); without CLICKHOUSE_URL the store stays embedded chDB in <data-dir>/demo.\n' +
        'No API keys: the agents are seeded simulations.',
    )
    .option('--no-serve', 'exit after the run instead of serving the dashboard')
    .option('--open', 'open the dashboard in a browser, on the failing gate')
    .option('--json', 'print the result as JSON (for scripts)')
    .option('--host <host>', 'dashboard address (anything but loopback needs --token)', '127.0.0.1')
    .option('--port <port>', 'dashboard port (0 = any free port)', '7357')
    .option('--token <token>', 'dashboard token (env PASSK_DASHBOARD_TOKEN)')
    .option('--concurrency <n>', 'trials in flight', '16')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk demo                          # run it, then open the printed links
  passk demo --no-serve --json > demo.json
  PASSK_BACKEND=kafka KAFKA_BROKERS=127.0.0.1:9092 SCHEMA_REGISTRY_URL=http://127.0.0.1:8080/apis/ccompat/v7 \\
    CLICKHOUSE_URL=http://127.0.0.1:8123 passk demo --no-serve

JSON: {numbers: [{agent_version, mean_accuracy: {value, interval}, pass_hat_k, flip_rate, …}], became_stable_correct,
  lost_stable_correct, regressions: [{row_id, must_not_break, outcome, first_divergent_check, …}], gate: {gate_id,
  event_id, verdict, reasons, confirmation}, production: {…, confirmed_failure}, next_gate: {…, picked_up} or null,
  wall_ms}. gate_id is the declared comparison, event_id the processors' GateEvaluated, confirmation their
  ConfirmationRequested (null when they asked for none). See docs/demo.md.
Exit codes: 0 ok (the demo's first gate failing is the expected result), 2 bad flag or config,
  3 the event log or the store is unreachable or held by another process.`),
    )
    .action(async (flags: DemoFlags, cmd: Command) => {
      const port = Number(flags.port);
      const concurrency = Number(flags.concurrency);
      if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(concurrency) || concurrency < 1) {
        writeStderr(`passk: --port must be 0–65535 and --concurrency a positive integer\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      const config = demoConfig(configOf(cmd, { token: flags.token }));
      const token = config.dashboard.token;
      const namespace = config.backend === 'kafka' ? demoNamespace() : undefined;
      let log, store;
      try {
        log = await openEventLog(config, namespace ? { namespace } : {});
        store = await openStore(config);
      } catch (e) {
        await log?.close();
        if (e instanceof StoreLocked || (e instanceof PipelineError && e.retriable)) {
          writeStderr(failureText(e));
          // exit, not return: a Kafka client left behind would keep the process alive (docs/reliability.md, fix 6)
          process.exit(EXIT.unavailable);
        }
        throw e;
      }
      const opened = log;
      // One set of processors for the whole demo (and the dashboard after it), as `passk process` runs them:
      // each stage waits until they have caught up with what it published, instead of restarting them (on
      // Kafka every restart is a rebalance of each group and a restore of each changelog).
      const processors = await startProcessors(config, {
        log: opened,
        instanceId: `demo-${process.pid}`,
        maxWaitMs: 50,
      });
      const pipeline: DemoPipeline = {
        log: opened,
        store: store.client,
        settle: () => processors.caughtUp(),
      };
      const progress = progressReporter(flags.json === true);
      let result: DemoResult;
      try {
        result = await runDemo(pipeline, { concurrency, onProgress: progress.update });
      } catch (e) {
        processors.stop();
        await processors.done.catch(() => {});
        throw e;
      } finally {
        progress.stop();
      }
      let url: string | null = null;
      let server;
      if (flags.serve) {
        try {
          server = await createDashboardServer({
            data: dashboardDataWithRounds(store.client, config),
            // the dashboard's suggested commands are this CLI's, with the flags this command was given
            command: passkCommand,
            timeouts: config.http,
            host: flags.host,
            port,
            ...(token ? { token } : {}),
          });
        } catch (e) {
          if (!(e instanceof DashboardConfigError)) throw e;
          writeStderr(`passk: ${e.message}\n`);
          process.exitCode = EXIT.usage;
        }
        url = server?.url ?? null;
      }
      const backend = {
        log: config.backend,
        ...(namespace ? { namespace } : {}),
        store: config.clickhouse.url ? 'clickhouse' : 'chdb',
      };
      const links = url ? demoLinks(result, url) : undefined;
      process.stdout.write(
        flags.json
          ? renderJson({
              ...result,
              backend,
              dashboard: url,
              links: links ? { gate: links.gate, row: links.row?.url ?? null } : null,
            })
          : renderTerminal(demoBlocks(result, url)),
      );
      if (flags.open && links) {
        const why = await openBrowser(links.gate);
        if (why) writeStderr(`passk: could not open a browser (${why}); open the link above\n`);
      }
      if (!server) {
        processors.stop();
        await processors.done;
        await store.close();
        await opened.close();
        return;
      }
      // The processors keep processing what other processes publish, so the page stays live.
      const running = server;
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      processors.stop();
      await processors.done;
      await running.close();
      await store.close();
      await opened.close();
    });
};
