import { CommanderError } from 'commander';
import { InputError, PipelineError } from '../schemas/errors.ts';
import { EXIT } from './exitCodes.ts';
import { writeStderr } from './format/render.ts';
import { buildProgram } from './program.ts';
import { PRODUCER_VERSION } from '../producers/version.ts';

/** The package's version: package.json's, the one version source (producers/version.ts). */
const VERSION = PRODUCER_VERSION;

// Output piped into a reader that stops early (`passk --help | head`) ends the command quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(EXIT.ok);
  throw e;
});

// `passk --version` (or -V) alone. Not commander's .version(): that makes --version global, so it would swallow
// `dataset export --version 2`.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
  process.exit(EXIT.ok);
}

try {
  const program = await buildProgram(argv);
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help, or a usage error commander has already explained
    process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else {
    // Loaded here, not at start-up: they import zod, yaml and the ClickHouse client, which `passk --help` does not
    // need.
    const { ConfigError } = await import('../deploy/config.ts');
    const { StoreLocked } = await import('../sinks/clickhouse/errors.ts');
    if (e instanceof InputError || e instanceof ConfigError) {
      writeStderr(`passk: ${e.message}\n`);
      process.exitCode = EXIT.usage;
    } else if (e instanceof StoreLocked || (e instanceof PipelineError && e.retriable)) {
      // a backend held by another process, or unreachable after every retry
      const { failureText } = await import('./format/storeHeld.ts');
      writeStderr(failureText(e));
      process.exitCode = EXIT.unavailable;
    } else {
      writeStderr(`passk: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = EXIT.error;
    }
    // A failed command ends here: a Kafka client it opened can leave a reconnect timer (or a consumer of a topology
    // that did not fail) behind, which would keep a `passk process` alive that processes nothing (found by the
    // fault campaign, docs/reliability.md). stderr is written synchronously to files and pipes.
    process.exit();
  }
}
