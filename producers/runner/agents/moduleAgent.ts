import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InputError } from '../../../schemas/errors.ts';
import { sha256 } from '../../importers/common.ts';
import { AgentFailed, AgentUnavailable, classifyFailure, TrialTimeout } from './failures.ts';
import { type Agent, AgentMeta, type AgentResult, toAgentResult, type TrialRequest } from './types.ts';

export interface ModuleAgentOptions {
  /** A .ts/.js/.mjs file whose default export (or `run`) is `(input, ctx) => result`. */
  readonly path: string;
  /**
   * worker: trials run in a pool of worker threads, one trial at a time in each, and each trial imports the module
   * afresh (no module state is shared; a trial past its timeout is stopped by ending its worker). The pool grows
   * one worker start at a time: a trial that finds no idle worker takes the first one free, the one starting or
   * one that finishes its trial first, so a fast agent runs on a few workers whatever the concurrency. none: one instance in this thread,
   * fastest, but module state is shared and a runaway trial cannot be stopped. @default 'worker'
   */
  readonly isolation?: 'worker' | 'none';
  /** A worker is replaced after this many trials (each fresh import stays in its module cache). @default 200 */
  readonly recycleAfter?: number;
  /** Called as each worker is started, with a promise that settles once it is ready (for tests and diagnostics). */
  readonly onWorkerStart?: (ready: Promise<void>) => void;
}

type AgentFn = (input: unknown, ctx: Omit<TrialRequest, 'input'>) => unknown;

const fail = (error: Record<string, unknown>): never => {
  const c = classifyFailure(error);
  if (c.infra) throw new AgentUnavailable(c.kind, c.message);
  throw new AgentFailed(c.kind, c.message);
};

interface PooledWorker {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  trials: number;
}

/**
 * The agent module, imported in this thread to read its exports. In a checkout passk runs under tsx's ESM hook, so a
 * TypeScript agent in an ES module package imports as it is; the installed package runs compiled JavaScript with no
 * loader, and Node 20 refuses a `.ts` file (ERR_UNKNOWN_FILE_EXTENSION). Then tsx's ESM hook (a dependency of passk)
 * is registered, once, and the module imported again under a URL of its own (Node keeps the failed import of the
 * first). A TypeScript agent also gets tsx's CommonJS hook first, once: in a package whose `type` is `commonjs` (what
 * `npm init -y` writes) a `.ts` file is CommonJS, which only that hook compiles (with the ESM hook alone Node failed
 * with ERR_INTERNAL_ASSERTION, or ERR_REQUIRE_CYCLE_MODULE). Only a TypeScript agent pays for it.
 */
const importAgent = async (url: string): Promise<unknown> => {
  if (/\.[cm]?ts$/.test(url))
    await (tsxCjsRegistered ??= import('tsx/cjs/api').then(({ register }) => void register()));
  try {
    return await import(url);
  } catch (e) {
    if ((e as { code?: unknown } | undefined)?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
    tsxRegistered ??= import('tsx/esm/api').then(({ register }) => void register());
    await tsxRegistered;
    return import(`${url}?passk_loader=tsx`);
  }
};
let tsxRegistered: Promise<void> | undefined;
let tsxCjsRegistered: Promise<void> | undefined;

type AgentExports = { default?: unknown; run?: unknown; meta?: unknown };
/**
 * An agent module's exports. A CommonJS module (a `.ts` agent in a `commonjs` package, compiled by tsx) imports as a
 * namespace whose `default` is its `module.exports`, where its `export default` and `export const run` are.
 */
const agentExports = (imported: unknown): AgentExports => {
  const mod = imported as AgentExports;
  if (typeof mod.default !== 'object' || mod.default === null || mod.run !== undefined) return mod;
  const inner = mod.default as AgentExports;
  return typeof inner.default === 'function' || typeof inner.run === 'function' ? inner : mod;
};

export const createModuleAgent = async (opts: ModuleAgentOptions): Promise<Agent> => {
  const path = resolve(opts.path);
  let source: string;
  try {
    source = await readFile(path, 'utf8');
  } catch {
    throw new InputError('cannot read the agent module', { file: opts.path });
  }
  const url = pathToFileURL(path).href;
  const mod = agentExports(await importAgent(url));
  const fn = (typeof mod.default === 'function' ? mod.default : mod.run) as AgentFn | undefined;
  if (typeof fn !== 'function')
    throw new InputError('the agent module exports no default function (or `run`)', { file: opts.path });
  const meta = mod.meta === undefined ? undefined : AgentMeta.safeParse(mod.meta);
  if (meta && !meta.success)
    throw new InputError(`invalid \`meta\` export: ${meta.error.issues[0]!.message}`, {
      file: opts.path,
      field: `meta.${meta.error.issues[0]!.path.join('.')}`,
    });
  const base = {
    kind: 'module' as const,
    fingerprint: `module:${sha256(source)}`,
    ...(meta?.data ? { meta: meta.data } : {}),
  };

  if (opts.isolation === 'none') {
    return {
      ...base,
      async run(request, { timeoutMs }) {
        const { input, ...ctx } = request;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new TrialTimeout(timeoutMs)), timeoutMs)),
        );
        try {
          const value = await Promise.race([Promise.resolve().then(() => fn(input, { ...ctx })), timeout]);
          return toAgentResult(value);
        } catch (e) {
          if (e instanceof TrialTimeout) throw e;
          return fail(e as Record<string, unknown>);
        } finally {
          clearTimeout(timer);
        }
      },
      close: async () => {},
    };
  }

  const typescript = /\.(c|m)?tsx?$/.test(path);
  const idle: PooledWorker[] = [];
  const all = new Set<PooledWorker>();
  const recycleAfter = opts.recycleAfter ?? 200;
  let seq = 0;
  // Trials waiting for a worker, served in order by the next worker to be ready or free. At most one worker starts
  // at a time: each one registers tsx (Node 20 gives every thread its own module hooks, so it cannot be shared)
  // and costs about 0.25 s of CPU here; at --concurrency 8 a fast agent started 8 of them for 72 trials.
  const waiting: { resolve: (p: PooledWorker) => void; reject: (e: unknown) => void }[] = [];
  let starting = false;
  let closed = false;

  const spawn = (): PooledWorker => {
    const worker = new Worker(new URL('./moduleWorker.mjs', import.meta.url), { workerData: { typescript } });
    const ready = new Promise<void>((res, rej) => {
      worker.once('message', () => res());
      worker.once('error', rej);
      worker.once('exit', (code) =>
        rej(new AgentUnavailable('agent_crashed', `the agent worker exited with code ${code} while starting`)),
      );
    });
    opts.onWorkerStart?.(ready);
    const pooled = { worker, ready, trials: 0 };
    all.add(pooled);
    worker.once('exit', () => all.delete(pooled));
    return pooled;
  };
  const retire = (p: PooledWorker) => {
    all.delete(p);
    void p.worker.terminate();
  };
  const release = (p: PooledWorker) => {
    const next = waiting.shift();
    if (next) next.resolve(p);
    else idle.push(p);
  };
  const startOne = () => {
    if (starting || closed || waiting.length === 0) return;
    starting = true;
    const p = spawn();
    p.ready.then(
      () => {
        starting = false;
        release(p);
        startOne();
      },
      (e: unknown) => {
        starting = false;
        retire(p);
        waiting
          .shift()
          ?.reject(
            e instanceof AgentUnavailable
              ? e
              : new AgentUnavailable('agent_crashed', `the agent worker did not start: ${(e as Error).message}`, e),
          );
        startOne();
      },
    );
  };
  /** An idle worker, or the first one to be ready or free (starting one if none is starting). */
  const acquire = (): Promise<PooledWorker> => {
    const p = idle.pop();
    if (p) return Promise.resolve(p);
    return new Promise<PooledWorker>((resolve, reject) => {
      waiting.push({ resolve, reject });
      startOne();
    });
  };

  const runIn = (p: PooledWorker, request: TrialRequest, timeoutMs: number): Promise<AgentResult> =>
    new Promise<AgentResult>((res, rej) => {
      const id = `${++seq}`;
      const timer = setTimeout(() => done(() => rej(new TrialTimeout(timeoutMs)), true), timeoutMs);
      const onMessage = (m: { id?: string; ok?: boolean; result?: unknown; error?: Record<string, unknown> }) => {
        if (m.id !== id) return;
        done(() => {
          try {
            res(m.ok ? toAgentResult(m.result) : fail(m.error ?? {}));
          } catch (e) {
            rej(e);
          }
        }, false);
      };
      const onError = (e: Error) =>
        done(() => rej(new AgentUnavailable('agent_crashed', `the agent crashed its worker: ${e.message}`, e)), true);
      const onExit = (code: number) =>
        done(() => rej(new AgentUnavailable('agent_crashed', `the agent's worker exited (code ${code})`)), true);
      const done = (settle: () => void, dead: boolean) => {
        clearTimeout(timer);
        p.worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (dead || ++p.trials >= recycleAfter) retire(p);
        else release(p);
        settle();
      };
      p.worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      p.worker.postMessage({ id, url, request });
    });

  return {
    ...base,
    async run(request, { timeoutMs }) {
      const p = await acquire(); // starting a worker (and the TypeScript loader) is not the trial's time
      return runIn(p, request, timeoutMs);
    },
    async close() {
      closed = true;
      for (const w of waiting.splice(0)) w.reject(new AgentUnavailable('agent_crashed', 'the agent was closed'));
      await Promise.all([...all].map((p) => p.worker.terminate()));
      all.clear();
      idle.length = 0;
    },
  };
};
