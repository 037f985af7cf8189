import type { Command } from 'commander';
import { openEventLog } from '../../deploy/eventLog.ts';
import type { EventLog } from '../../processors/ports.ts';
import { PipelineError } from '../../schemas/errors.ts';
import { createIngestServer, type IngestServer } from '../../producers/ingest/index.ts';
import { EXIT } from '../exitCodes.ts';
import { otlpReceiverOptions } from '../../deploy/otlp.ts';
import { logTrials } from '../../deploy/knownTrials.ts';
import { readPolicyFile } from './sample.ts';
import { writeStderr } from '../format/render.ts';
import { epilog } from '../format/helpText.ts';
import { REDACT_HELP, redactFlag, redactorsOf } from './redactFlags.ts';
import { configOf } from '../context.ts';

type IngestFlags = {
  host: string;
  port: string;
  token?: string;
  otlpPolicy?: string;
  redact?: [string, string][];
  json?: boolean;
};

export const ingestCommand = (program: Command): void => {
  program
    .command('ingest')
    .description(
      'Serves POST /api/v1/trials, /api/v1/traces, /api/v1/judgments, /api/v1/labels and\n' +
        '/api/v1/datasets/{id}/rows?version=V: a JSON array or NDJSON of the shapes the SDK takes (the flat trial format\n' +
        'for trials), validated by the same schemas. Each answer comes once the events are durable in the event log\n' +
        'and says per item: accepted, duplicate or rejected (index, field, reason). POST /v1/traces and /v1/logs are an\n' +
        'OTLP/HTTP receiver (protobuf or JSON): spans of the common LLM conventions (OpenTelemetry GenAI, OpenInference,\n' +
        'OpenLLMetry, Vercel AI SDK) become production traces, sampled by --otlp-policy and redacted as passk sample\n' +
        'does. GET /metrics is in the Prometheus text format; GET /healthz says the queue. Writes need the write token\n' +
        '(--token or PASSK_INGEST_TOKEN). See docs/ingest.md.',
    )
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', '7358')
    .option('--token <token>', 'write token, 16+ characters (env PASSK_INGEST_TOKEN)')
    .option('--otlp-policy <file>', 'sampling policy of OTLP traces, as passk sample --policy (default: keep all)')
    .option('--redact <name=regex>', REDACT_HELP, redactFlag)
    .option('--json', 'print {"url": …} as JSON once listening (for scripts)')
    .addHelpText(
      'after',
      epilog(`
Examples:
  PASSK_INGEST_TOKEN=$(openssl rand -hex 16) passk ingest --port 0 --json

Exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad flag (no token, bad port, a bad
  policy file), 3 the event log is unreachable.`),
    )
    .action(async (flags: IngestFlags, cmd: Command) => {
      const port = Number(flags.port);
      const token = flags.token ?? configOf(cmd).ingest.token;
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        writeStderr(`passk: --port must be an integer in 0–65535, got "${flags.port}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      if (token === undefined || token.length < 16) {
        writeStderr('passk: ingest needs a write token of 16+ characters (--token or PASSK_INGEST_TOKEN)\n');
        process.exitCode = EXIT.usage;
        return;
      }
      const policy = flags.otlpPolicy === undefined ? undefined : await readPolicyFile(flags.otlpPolicy);
      let log: EventLog | undefined;
      let server: IngestServer | undefined;
      let stopReading!: () => void;
      const stopping = new Promise<void>((resolve) => (stopReading = resolve));
      let otlp: ReturnType<typeof otlpReceiverOptions> | undefined;
      try {
        const config = configOf(cmd);
        log = await openEventLog(config);
        otlp = otlpReceiverOptions(config, policy, (line) => writeStderr(`passk ingest: ${line}\n`));
        server = await createIngestServer({
          publisher: log.publisher,
          // a conflicting re-send is refused after a restart too: the log's trials, read once in the background
          knownTrials: logTrials(log, stopping),
          token,
          timeouts: config.http,
          host: flags.host,
          port,
          otlp: otlp.options,
          redactors: redactorsOf(config, flags.redact),
        });
      } catch (e) {
        otlp?.close();
        await log?.close();
        if (!(e instanceof PipelineError && e.retriable)) throw e;
        writeStderr(`passk: ${e.message}\n`);
        // exit, not return: a Kafka client's socket or timer left behind would keep the process alive, never
        // listening, so no supervisor restarts it (as `passk process`: docs/reliability.md, fixes 3 and 6)
        process.exit(EXIT.unavailable);
      }
      process.stdout.write(flags.json ? `${JSON.stringify({ url: server.url })}\n` : `passk ingest: ${server.url}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      stopReading();
      await server.close();
      otlp.close();
      await log.close();
    });
};
