import { randomBytes } from 'node:crypto';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { openEventLog } from '../../deploy/eventLog.ts';
import { describeDrift, rebuildStore, storeDrift } from '../../deploy/rebuild.ts';
import { storeFailure, storeTarget } from '../../deploy/store.ts';
import { passkCommand } from '../format/doc.ts';
import { progressBarSize, renderJson, writeStderr } from '../format/render.ts';
import { epilog } from '../format/helpText.ts';
import { EXIT } from '../exitCodes.ts';
import { withStore } from '../context.ts';

type RebuildFlags = { json?: boolean };

export const rebuildCommand = (program: Command): void => {
  program
    .command('rebuild')
    .description(
      'The store is a projection of the event log. This replays the whole log into the configured store\n' +
        '(embedded chDB in <data-dir>/store, or the server of CLICKHOUSE_URL): the trials are folded again\n' +
        'from the first one into trials, row_state, runs and version_summaries, and every other stored event\n' +
        'is copied from its topic. Idempotent: what the store already holds is not written twice. Then the\n' +
        "store's ledger (store_positions) is at least at every processor's committed offsets. passk process\n" +
        'does this by itself at start when the store lacks what the log holds or lost a part; passk check\n' +
        'says when. Shows a progress bar on a terminal. See docs/reliability.md.',
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk rebuild
  passk --data-dir ./.passk rebuild --json

JSON: {store, before: {behind, totals, damaged}, records, trials, after: {behind, totals, damaged}, ok}.
Exit codes: 0 rebuilt and consistent, 1 rebuilt but the log itself gives trials and row states that
differ (passk check lists them), 3 the event log or the store is unreachable, or the store is held
by another passk process (stop it; a passk process rebuilds the store at start anyway).`),
    )
    .action(async (flags: RebuildFlags, cmd: Command) => {
      await withStore(cmd, async (store, config) => {
        const log = await openEventLog(config);
        const target = storeTarget(config);
        const where = target.kind === 'embedded' ? target.path : target.url;
        const bar = process.stderr.isTTY
          ? new cliProgress.SingleBar(
              {
                format: ' {bar} {value}/{total} records | ETA {eta_formatted} ',
                barsize: progressBarSize(36),
                hideCursor: true,
                stream: process.stderr,
              },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        let started = false;
        let shownAt = 0;
        try {
          const before = await storeDrift(log, store.client);
          const why = describeDrift(before);
          writeStderr(
            why.length > 0
              ? `passk rebuild: ${why.join('; ')}\n`
              : `passk rebuild: the store holds what the log committed; replaying it anyway\n`,
          );
          const result = await rebuildStore({
            log,
            store,
            instanceId: `rebuild-${process.pid}-${randomBytes(4).toString('hex')}`,
            maxWaitMs: config.batchWindowMs,
            onRestart: (e) => {
              if (started) bar?.stop();
              started = false;
              writeStderr(`passk rebuild: ${e.message}: replaying the log again with new groups\n`);
            },
            onProgress: (done, total) => {
              if (bar) {
                if (!started) bar.start(total, 0);
                started = true;
                bar.setTotal(total);
                bar.update(done);
              } else if (Date.now() - shownAt >= 1_000) {
                shownAt = Date.now();
                writeStderr(`passk rebuild: ${done} of ${total} records replayed\n`);
              }
            },
          });
          if (started) bar?.stop();
          started = false;
          const after = result.after;
          const ok = !after.damaged && after.behind.length === 0;
          const drift = (d: typeof before) => ({ behind: d.behind, totals: d.totals, damaged: d.damaged });
          process.stdout.write(
            flags.json
              ? renderJson({
                  store: where,
                  before: drift(before),
                  records: result.records,
                  trials: result.trials,
                  after: drift(after),
                  ok,
                })
              : `rebuilt ${where} from the event log: ${result.records} records replayed, ${result.trials} trials\n` +
                  (ok
                    ? `consistent: ${after.totals.trials} trials, the same in row_state and version_summaries\n`
                    : `NOT consistent: ${describeDrift(after).join('; ')}; ${passkCommand('check')} lists the rows\n`),
          );
          process.exitCode = ok ? EXIT.ok : EXIT.failed;
        } catch (e) {
          throw storeFailure(config, e); // a full disk: one line naming the store, exit 3
        } finally {
          if (started) bar?.stop();
          await log.close();
        }
      });
    });
};
