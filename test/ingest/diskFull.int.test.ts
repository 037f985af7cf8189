import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/index.ts';
import type { EventLog } from '../../processors/ports.ts';
import { createIngestServer, type IngestServer } from '../../producers/ingest/index.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';

/**
 * A full disk under the embedded log is the backend being unavailable, not a crash: the ingest API answers 503 with
 * Retry-After (docs/ingest.md) naming the cause and the log's file, appends nothing, and takes the same request once
 * there is space again. On a 4 MiB tmpfs the test mounts (as root); where it cannot mount one, it says why and skips.
 */
const TOKEN = 'disk-full-token-0123456789';

const trials = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      suite: 'disk',
      dataset_version: 'v1',
      row_id: `r${from + i}`,
      agent_version: 'a1',
      run_id: 'run-1',
      attempt: 0,
      passed: true,
      output: `answer ${from + i} `.repeat(4_000),
    }),
  ).join('\n');

// on the main thread, and from the writer thread (`appendInThread`): the same answer
for (const appendInThread of [false, true])
  describe(`a full disk under the embedded log${appendInThread ? ' (appends from the writer thread)' : ''}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-disk-full-'));
    let mounted: string | undefined;
    let why = '';
    let log: EventLog;
    let server: IngestServer;

    beforeAll(async () => {
      why = mountTmpfs(dir, '4m') ?? '';
      if (why) return;
      mounted = dir;
      log = createEmbeddedEventLog({ dataDir: join(dir, 'data'), appendInThread });
      server = await createIngestServer({ publisher: log.publisher, token: TOKEN, port: 0 });
    });
    afterAll(async () => {
      await server?.close();
      await log?.close();
      if (mounted) execFileSync('umount', [mounted]);
      rmSync(dir, { recursive: true, force: true });
    });

    const post = (body: string) =>
      fetch(new URL('/api/v1/trials', server.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
        body,
      });

    it('ingest answers 503 with Retry-After naming the cause and the file, then takes the request once there is space', async (ctx) => {
      if (!mounted) return ctx.skip(why);
      const filler = join(dir, 'filler');
      writeFileSync(filler, Buffer.alloc(Math.max(0, statfsSync(dir).bavail * statfsSync(dir).bsize - 300_000)));
      let full: Response | undefined;
      let next = 0;
      for (let i = 0; i < 40 && !full; i++, next += 5) {
        const res = await post(trials(next, 5));
        if (res.status === 503) full = res;
        else expect(res.status, await res.text()).toBe(200);
      }
      expect(full, 'the disk never filled').toBeDefined();
      expect(full!.headers.get('retry-after')).toBe('1');
      const text = await full!.text();
      expect(text).toContain('the event log is unavailable');
      expect(text).toContain(join(dir, 'data', 'log.sqlite'));
      expect(text).toMatch(/the disk is full|the disk refused a write/);
      rmSync(filler);
      const again = await post(trials(next - 5, 5));
      expect(again.status, await again.clone().text()).toBe(200);
    });
  });
