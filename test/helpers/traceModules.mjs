// `node --import ./test/helpers/traceModules.mjs …` appends the URL of every ES module the process loads to the file
// named by PASSK_TRACE_MODULES, one per line (test/cli/startupModules.int.test.ts). A load hook sees each module once,
// those tsx compiles included; it runs on the hooks thread, so it writes synchronously.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (process.env.PASSK_TRACE_MODULES) appendFileSync(process.env.PASSK_TRACE_MODULES, url + '\\n');
  return loaded;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
