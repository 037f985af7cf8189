import { dirname } from 'node:path';
import type { PasskConfig } from '../../deploy/config.ts';
import { readStoreOwner } from '../../deploy/storeOwner.ts';
import { StoreLocked } from '../../sinks/clickhouse/errors.ts';
import { type Block, nextCommand, passkCommand } from './doc.ts';
import { breakCommand, wrapLine } from './render.ts';

/** An error message's width: an 80-column terminal's (a narrower terminal's `writeStderr` wraps it again). */
const WIDTH = 80;

/**
 * What the CLI says when another process holds the embedded store: one message, its prose wrapped to 80 columns
 * between words (a path is never cut), naming the data directory and who holds it (the owner file's `passk process`
 * or `passk serve`, else the pid chDB recorded), and what to do. The owner already folds the trials recorded there, so
 * the reader is sent to wait for it, or to read through it (`report --from-store` asks its local API), or to stop it.
 */
export const storeLockedText = (e: StoreLocked): string => {
  // the embedded store is `<dataDir>/store` (deploy/store.ts, storeTarget)
  const dataDir = dirname(e.path);
  const owner = readStoreOwner(dataDir);
  if (!owner)
    return `${wrapLine(
      `passk: the store in ${dataDir} is held by another passk process${e.pid === undefined ? '' : ` (pid ${e.pid})`}: wait for it to finish, or stop it, and try again.`,
      WIDTH,
      '  ',
    )}\n`;
  const text =
    `passk: the store in ${dataDir} is held by passk ${owner.command} (pid ${owner.pid}), which is already ` +
    `folding the trials recorded there: wait for it, see what it holds ` +
    `${owner.command === 'serve' ? 'on its dashboard or ' : ''}with the command below, or stop it first.`;
  return `${[wrapLine(text, WIDTH, '  '), ...breakCommand(passkCommand('report --from-store'), WIDTH)].join('\n')}\n`;
};

/** A known failure of a command as the CLI prints it: the store's lock as above, anything else in one line. */
export const failureText = (e: unknown): string =>
  e instanceof StoreLocked ? storeLockedText(e) : `passk: ${e instanceof Error ? e.message : String(e)}\n`;

/**
 * What to run once events are recorded: `process --until-caught-up`, then `then` (by default `report --from-store`).
 * When a live `passk process` (or `passk serve`) owns this data directory's embedded store it is already folding them
 * in, and a second `process` would only fail on the store's lock: then only `then`, saying that the running one folds
 * `what`. A `passk serve --no-process` holds the store without folding: then the way to fold is to stop it first.
 */
export const foldedNext = (
  config: PasskConfig,
  opts: { then?: readonly string[]; what?: string; note?: string } = {},
): Block => {
  const then = opts.then ?? [passkCommand('report --from-store')];
  const what = opts.what ?? 'these trials';
  const owner = config.clickhouse.url ? undefined : readStoreOwner(config.dataDir);
  if (!owner) return nextCommand([passkCommand('process --until-caught-up'), ...then], opts.note);
  const who = `passk ${owner.command} (pid ${owner.pid})`;
  if (owner.folding === false)
    return nextCommand(
      then,
      `the running ${who} holds the store without folding ${what}: stop it, then run ${passkCommand('process --until-caught-up')} (or serve without --no-process)`,
    );
  return nextCommand(then, `the running ${who} picks ${what} up`);
};
