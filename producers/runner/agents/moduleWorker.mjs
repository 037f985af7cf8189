// A worker thread that runs trials of one agent module. Every trial imports the module afresh
// (a new module instance per trial, so module-level state is never shared between trials).
// TypeScript agents get tsx's loader; plain JavaScript agents skip it.
import { parentPort, workerData } from 'node:worker_threads';

if (workerData.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
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
    const fn = typeof mod.default === 'function' ? mod.default : mod.run;
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
