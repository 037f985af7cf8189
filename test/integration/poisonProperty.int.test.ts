import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { toAttemptRecord } from '../../processors/core/rowState.ts';
import { slotConflict, trialRowKey } from '../../processors/folds/rowState.ts';
import { openStore } from '../../deploy/store.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { anyBytes, base } from '../helpers/poison.ts';

/**
 * Issue #13, end to end on the embedded log and chDB: any mix of records, valid or not, written raw to the
 * trials topic. The processors never halt; every refused record is in the DLQ once (and in the store's
 * dead_letters once) with a reason, also after a restart; every valid trial is stored once. A valid trial that
 * answers a (run, attempt) slot already answered otherwise is a conflict: dead-lettered once, not stored. Re-sends
 * of one slot (copies and other answers) are mixed in so that every run meets duplicates and conflicts.
 */
const resend = fc
  .record({ salt: fc.nat({ max: 2 }), passed: fc.boolean() })
  .map(({ salt, passed }) =>
    new TextEncoder().encode(
      JSON.stringify({ ...base, event_id: deterministicEventId(base.occurred_at, 'resend', salt), passed }),
    ),
  );

describe('arbitrary records through the log, the processors and the store', () => {
  it('dead-letters each refused record once with a reason and stores each valid trial once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(anyBytes, resend), { minLength: 1, maxLength: 25 }), async (records) => {
        const dataDir = mkdtempSync(join(tmpdir(), 'passk-poison-prop-'));
        try {
          const config = PasskConfig.parse({ dataDir });
          // The oracle: a record that does not decode is refused; a valid trial keyed by its row (as every producer
          // keys it, so a row's records keep their order) is stored, unless its (run, attempt) slot was answered
          // otherwise by an earlier one: then it is a conflict, dead-lettered with its reason and not stored.
          const refused: Uint8Array[] = [];
          const keys: string[] = [];
          const held = new Map<string, ReturnType<typeof toAttemptRecord>>();
          const stored = new Set<string>();
          let conflicts = 0;
          for (const [i, r] of records.entries()) {
            let t: TrialRecorded;
            try {
              t = (await jsonCodec.decode(r)) as TrialRecorded;
            } catch (e) {
              if (!(e instanceof InvalidEvent)) throw e;
              refused.push(r);
              keys.push(`k${i % 3}`);
              continue;
            }
            keys.push(trialRowKey(t));
            const slot = `${trialRowKey(t)}\u0000${t.run_id}\u0000${t.attempt}`;
            const rec = toAttemptRecord(t);
            const first = held.get(slot);
            if (first === undefined) held.set(slot, rec);
            if (first !== undefined && slotConflict([first], rec) !== undefined) conflicts++;
            else stored.add(`${trialRowKey(t)}\u0000${t.event_id}`); // the store's identity: the row and the event id
          }
          const log = await openEventLog(config);
          try {
            await log.publisher.publishRaw(
              TOPICS.trials,
              records.map((value, i) => ({ key: keys[i]!, value })),
            );
            for (const instanceId of ['first', 'restart']) {
              const run = await startProcessors(config, { log, untilCaughtUp: true, maxWaitMs: 1, instanceId });
              await run.done;
            }
            const letters = await log.deadLetters();
            const at = letters.map((l) => `${l.source.partition}/${l.source.offset}`);
            expect(new Set(at).size).toBe(letters.length);
            expect(letters).toHaveLength(refused.length + conflicts);
            for (const l of letters) expect(l.reason.length).toBeGreaterThan(0);
            const conflicted = letters.filter((l) => l.reason.startsWith('conflict: '));
            expect(conflicted).toHaveLength(conflicts);
            const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
            const decodeLetters = letters.filter((l) => !conflicted.includes(l));
            expect(decodeLetters.map((l) => hex(l.value)).sort()).toEqual(refused.map(hex).sort());
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
            expect(await count("SELECT count() AS n FROM dead_letters FINAL WHERE stage = 'conflict'")).toBe(conflicts);
            expect(await count('SELECT count() AS n FROM trials FINAL')).toBe(stored.size);
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
