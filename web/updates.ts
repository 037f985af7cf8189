import type { ServerResponse } from 'node:http';

/**
 * Live updates over server-sent events. The hub polls a cheap watermark of the store (it changes whenever
 * anything the dashboard shows may have changed) while at least one page listens, and tells every page when it
 * moves. Polling the store rather than hooking the writer keeps one code path for both deployments: with a
 * ClickHouse server, the processors that write may run in another process or on another machine.
 */
/** Whether what the page shows is still being kept up to date (the processors that fill the store are running). */
export type LiveStatus = { readonly state: 'ok' } | { readonly state: 'failed'; readonly message: string };

export interface UpdateHub {
  /** Registers an open SSE response; it is dropped when the client goes away. */
  attach(res: ServerResponse): void;
  /** Checks the watermark now (e.g. right after this process wrote something). */
  poke(): Promise<void>;
  readonly clients: number;
  /** Tells every open page (and every page that opens later) the status, e.g. that the processors crashed. */
  setStatus(status: LiveStatus): void;
  readonly status: LiveStatus;
  close(): void;
}

export const createUpdateHub = (opts: {
  watermark: () => Promise<string>;
  /** @default 1000 */
  intervalMs?: number;
  /** @default 15000 */
  heartbeatMs?: number;
  onError?: (e: unknown) => void;
}): UpdateHub => {
  const clients = new Set<ServerResponse>();
  let last: string | undefined;
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;
  let status: LiveStatus = { state: 'ok' };

  const send = (res: ServerResponse, event: string, data: unknown): void => {
    res.write(`event: ${event}\nid: ${seq}\ndata: ${JSON.stringify(data)}\n\n`);
  };

  const check = async (): Promise<void> => {
    try {
      const mark = await opts.watermark();
      if (mark === last) return;
      const first = last === undefined;
      last = mark;
      seq++;
      if (!first) for (const res of clients) send(res, 'update', { seq, watermark: mark });
    } catch (e) {
      opts.onError?.(e);
    }
  };
  const poke = (): Promise<void> => (checking ??= check().finally(() => (checking = undefined)));

  const heartbeat = setInterval(() => {
    for (const res of clients) res.write(': keep-alive\n\n');
  }, opts.heartbeatMs ?? 15_000);
  heartbeat.unref();

  const startPolling = (): void => {
    timer ??= setInterval(() => void poke(), opts.intervalMs ?? 1_000);
    timer.unref();
  };
  const stopPolling = (): void => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  return {
    attach(res) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 2000\n\n');
      clients.add(res);
      void poke().then(() => send(res, 'hello', { seq, watermark: last ?? null, status }));
      startPolling();
      res.on('close', () => {
        clients.delete(res);
        if (clients.size === 0) stopPolling();
      });
    },
    poke,
    get clients() {
      return clients.size;
    },
    setStatus(next) {
      status = next;
      for (const res of clients) send(res, 'status', status);
    },
    get status() {
      return status;
    },
    close() {
      stopPolling();
      clearInterval(heartbeat);
      for (const res of clients) res.end();
      clients.clear();
    },
  };
};
