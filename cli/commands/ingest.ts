import type { Command } from 'commander';
import { loadConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import type { EventLog } from '../../processors/ports.ts';
import { PipelineError } from '../../schemas/errors.ts';
import { createIngestServer, type IngestServer } from '../../producers/ingest/index.ts';
import { EXIT } from '../exitCodes.ts';

type IngestFlags = { host: string; port: string; token?: string; json?: boolean };

export const ingestCommand = (program: Command): void => {
  program
    .command('ingest')
    .summary('serve only the HTTP ingest API (for production hosts): trials, traces, judgments, labels')
    .description(
      'Serves POST /api/v1/trials, /api/v1/traces, /api/v1/judgments and /api/v1/labels: a JSON array or NDJSON of\n' +
        'the shapes the SDK takes (the flat trial format for trials), validated by the same schemas. Each answer comes\n' +
        'once the events are durable in the event log and says per item: accepted, duplicate or rejected (index,\n' +
        'field, reason). Writes need the write token (--token or PASSK_INGEST_TOKEN). See docs/ingest.md.',
    )
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', '7358')
    .option('--token <token>', 'write token, 16+ characters (env PASSK_INGEST_TOKEN)')
    .option('--json', 'print {"url": …} as JSON once listening (for scripts)')
    .addHelpText(
      'after',
      `
Examples:
  PASSK_INGEST_TOKEN=$(openssl rand -hex 16) passk ingest --port 0 --json

Exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad flag (no token, bad port), 3 the event log is unreachable.`,
    )
    .action(async (flags: IngestFlags, cmd: Command) => {
      const port = Number(flags.port);
      const token = flags.token ?? loadConfig(cmd.optsWithGlobals()).ingest.token;
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        process.stderr.write(`passk: --port must be an integer in 0–65535, got "${flags.port}"\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      if (token === undefined || token.length < 16) {
        process.stderr.write('passk: ingest needs a write token of 16+ characters (--token or PASSK_INGEST_TOKEN)\n');
        process.exitCode = EXIT.usage;
        return;
      }
      let log: EventLog | undefined;
      let server: IngestServer | undefined;
      try {
        log = await openEventLog(loadConfig(cmd.optsWithGlobals()));
        server = await createIngestServer({ publisher: log.publisher, token, host: flags.host, port });
      } catch (e) {
        await log?.close();
        if (!(e instanceof PipelineError && e.retriable)) throw e;
        process.stderr.write(`passk: ${e.message}\n`);
        process.exitCode = EXIT.unavailable;
        return;
      }
      process.stdout.write(flags.json ? `${JSON.stringify({ url: server.url })}\n` : `passk ingest: ${server.url}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await server.close();
      await log.close();
    });
};
