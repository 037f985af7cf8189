// A worker thread that runs trials of one agent module. Every trial imports the module afresh
// (a new module instance per trial, so module-level state is never shared between trials).
// TypeScript agents get tsx's loader; plain JavaScript agents skip it.
import { parentPort, workerData } from 'node:worker_threads';

// both of tsx's hooks: a `.ts` agent in a `commonjs` package (what `npm init -y` writes) is CommonJS (moduleAgent.ts)
if (workerData.typescript) {
  (await import('tsx/esm/api')).register();
  (await import('tsx/cjs/api')).register();
}

const errorData = (e) => {
  const err = e ?? {};
  const out = { message: typeof err.message === 'string' ? err.message : String(e) };
  for (const k of ['name', 'kind', 'infra', 'retriable', 'status', 'statusCode', 'code'])
    if (['string', 'number', 'boolean'].includes(typeof err[k])) out[k] = err[k];
  return out;
};

parentPort.on('message', async ({ id, url, request }) => {
  try {
    const mod = await import(`${url}${url.includes('?') ? '&' : '?'}passk_trial=${encodeURIComponent(id)}`);
    // a CommonJS agent's exports are its namespace's `default` (moduleAgent.ts, agentExports)
    const inner = mod.default;
    const cjs = typeof inner === 'object' && inner !== null && mod.run === undefined;
    const exp = cjs && (typeof inner.default === 'function' || typeof inner.run === 'function') ? inner : mod;
    const fn = typeof exp.default === 'function' ? exp.default : exp.run;
    if (typeof fn !== 'function')
      throw Object.assign(new Error('the agent module exports no default function (or `run`)'), {
        kind: 'agent_protocol',
      });
    const { input, ...ctx } = request;
    const result = await fn(input, ctx);
    parentPort.postMessage({ id, ok: true, result });
  } catch (e) {
    parentPort.postMessage({ id, ok: false, error: errorData(e) });
  }
});
parentPort.postMessage({ ready: true });
