// `node --import ./test/helpers/traceModules.mjs …` appends the URL of every ES module the process loads to the file
// named by PASSK_TRACE_MODULES, one per line (test/cli/startupModules.int.test.ts). A load hook sees each module once,
// those tsx compiles included; it runs on the hooks thread, so it writes synchronously. CommonJS modules required by
// other CommonJS modules, or through createRequire (ajv, yaml, cli-table3 loaded at their first use), pass no load
// hook: they are appended at exit, as file URLs, from the main thread's require cache.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (process.env.PASSK_TRACE_MODULES) appendFileSync(process.env.PASSK_TRACE_MODULES, url + '\\n');
  return loaded;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

const cache = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const file = process.env.PASSK_TRACE_MODULES;
  if (!file) return;
  const required = Object.keys(cache).map((path) => pathToFileURL(path).href);
  if (required.length > 0) appendFileSync(file, required.join('\n') + '\n');
});
