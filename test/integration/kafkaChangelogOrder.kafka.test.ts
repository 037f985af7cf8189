import { randomBytes } from 'node:crypto';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, inject, it } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import { fromRowStateChanged } from '../../processors/folds/rowState.ts';
import { checkpointOf, type RowTable } from '../../processors/folds/rowTable.ts';
import { trialTopology, type EventPublisher } from '../../processors/index.ts';
import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import { TOPICS, rowStateKey } from '../../schemas/topics.ts';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { publishAll, straightReplay } from '../helpers/processorsHarness.ts';

// The trial topology on real Kafka with overlapping changelog publishes (docs/performance.md, "Kafka
// pipelining"): every row changes in many small units, so unit k+1's record for a row is sent while unit k's
// may still be in flight. The changelog must hold each row's records in seq order, so that its last record
// (what compaction keeps, what a restore reads) is the row's newest state.
describe('trial topology on Kafka, overlapping changelog publishes', () => {
  it('keeps per-key order of the changelog records, and its last record per row is one straight replay', async () => {
    // one partition and a small maximum request size: each unit's records take several requests, and every
    // unit changes every row, so a later unit's first request landing before an earlier unit's last one would
    // put an older state of some row last
    const config = PasskConfig.parse({
      backend: 'kafka',
      maxEventBytes: 20_000,
      kafka: {
        brokers: inject('kafkaBrokers').split(','),
        schemaRegistryUrl: inject('schemaRegistryUrl'),
        partitions: 1,
      },
    });
    const log = await openEventLog(config, { namespace: `t${randomBytes(4).toString('hex')}.` });
    try {
      // 40 attempts of 30 rows, attempt by attempt: each unit of 40 trials changes (nearly) every row
      const events: TrialRecorded[] = [];
      for (let attempt = 0; attempt < 40; attempt++)
        for (let r = 0; r < 30; r++)
          events.push(
            trial({ row: `r${r}`, version: 'v1', attempt, passed: (r + attempt) % 3 !== 0, output: `o${r % 4}` }),
          );
      await publishAll(log, events);
      let inFlight = 0;
      let mostInFlight = 0;
      const publisher: EventPublisher = {
        ...log.publisher,
        publish: async (e, opts) => {
          mostInFlight = Math.max(mostInFlight, ++inFlight);
          try {
            await log.publisher.publish(e, opts);
          } finally {
            inFlight--;
          }
        },
      };
      const progress = await lastValueFrom(
        trialTopology(
          { source: log, publisher, sink: { writeTrials: async () => {} } },
          {
            instanceId: `order-${randomBytes(3).toString('hex')}`,
            producer: 'passk-processors/test',
            partitionOf,
            maxBatch: 40,
            maxRows: 40,
            maxWaitMs: 1,
            maxPublishesInFlight: 4,
            untilCaughtUpEveryMs: 20,
          },
        ).pipe(toArray()),
      );
      expect(progress.reduce((a, p) => a + p.records, 0)).toBe(events.length);
      expect(mostInFlight).toBeGreaterThan(1); // the publishes did overlap

      const records: RowStateChanged[] = [];
      await readToEnd(log, {
        topic: TOPICS.rowstate,
        groupId: `check-${randomBytes(4).toString('hex')}`,
        onEvent: (e) => void (e.type === 'RowStateChanged' && records.push(e)),
      });
      // per key, in log order: seq only goes up, and rows changed more than once were written more than once
      const seqs = new Map<string, number[]>();
      for (const r of records) seqs.set(rowStateKey(r), [...(seqs.get(rowStateKey(r)) ?? []), r.seq]);
      const outOfOrder = [...seqs].filter(([, s]) => s.some((v, i) => i > 0 && v <= s[i - 1]!));
      expect(outOfOrder).toEqual([]);
      expect([...seqs.values()].every((s) => s.length > 10)).toBe(true);
      // the last record of each row (compaction's survivor), not the highest seq: the straight replay
      const last: RowTable = new Map();
      for (const r of records) last.set(rowStateKey(r), fromRowStateChanged(r));
      expect(JSON.stringify(checkpointOf(last))).toBe(await straightReplay(log));
    } finally {
      await log.close();
    }
  }, 120_000);
});
