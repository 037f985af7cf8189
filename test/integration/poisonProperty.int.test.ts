import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { openStore } from '../../deploy/store.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { anyBytes } from '../helpers/poison.ts';

/**
 * Issue #13, end to end on the embedded log and chDB: any mix of records, valid or not, written raw to the
 * trials topic. The processors never halt; every refused record is in the DLQ once (and in the store's
 * dead_letters once) with a reason, also after a restart; every valid trial is stored once.
 */
describe('arbitrary records through the log, the processors and the store', () => {
  it('dead-letters each refused record once with a reason and stores each valid trial once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyBytes, { minLength: 1, maxLength: 25 }), async (records) => {
        const dataDir = mkdtempSync(join(tmpdir(), 'passk-poison-prop-'));
        try {
          const config = PasskConfig.parse({ dataDir });
          const refused: Uint8Array[] = [];
          const valid = new Set<string>();
          for (const r of records)
            try {
              valid.add((await jsonCodec.decode(r)).event_id);
            } catch (e) {
              if (!(e instanceof InvalidEvent)) throw e;
              refused.push(r);
            }
          const log = await openEventLog(config);
          try {
            await log.publisher.publishRaw(
              TOPICS.trials,
              records.map((value, i) => ({ key: `k${i % 3}`, value })),
            );
            for (const instanceId of ['first', 'restart']) {
              const run = await startProcessors(config, { log, untilCaughtUp: true, maxWaitMs: 1, instanceId });
              await run.done;
            }
            const letters = await log.deadLetters();
            const at = letters.map((l) => `${l.source.partition}/${l.source.offset}`);
            expect(new Set(at).size).toBe(letters.length);
            expect(letters).toHaveLength(refused.length);
            for (const l of letters) expect(l.reason.length).toBeGreaterThan(0);
            const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
            expect(letters.map((l) => hex(l.value)).sort()).toEqual(refused.map(hex).sort());
          } finally {
            await log.close();
          }
          const store = await openStore(config, { migrate: false });
          try {
            const count = async (query: string) =>
              Number(
                ((await (await store.client.query({ query, format: 'JSONEachRow' })).json()) as { n: string }[])[0]!.n,
              );
            expect(await count("SELECT count() AS n FROM dead_letters FINAL WHERE stage = 'decode'")).toBe(
              refused.length,
            );
            expect(await count('SELECT count() AS n FROM trials FINAL')).toBe(valid.size);
          } finally {
            await store.close();
          }
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      }),
      { numRuns: 8 },
    );
  }, 300_000);
});
