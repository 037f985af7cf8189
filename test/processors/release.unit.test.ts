import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { lastValueFrom, type Observable, type Subscription, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import {
  datasetTopology,
  gateTopology,
  trialTopology,
  windowTopology,
  type DecisionProgress,
  type EventSink,
  type TrialSink,
} from '../../processors/index.ts';
import { createInFlight } from '../../processors/operators/inFlight.ts';
import { stopListeners } from '../../processors/operators/onStop.ts';
import { pullBatches } from '../../processors/operators/pullBatches.ts';
import type { EventBatch, EventPublisher, EventSource } from '../../processors/ports.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { createMemoryLog, type MemoryLog } from '../helpers/memoryLog.ts';
import { datasetRow } from '../helpers/feedbackLoop.ts';
import { T0, trace, trial } from '../helpers/processorFixtures.ts';

/**
 * What a finished topology leaves behind. A stop promise outlives the topologies it is handed to
 * (deploy's shutdown promise, or none at all), so nothing of a topology may stay reachable from it:
 * checked with the collector itself (a FinalizationRegistry on the topology's sink, which its
 * closures hold) and by counting the listeners left on the stop.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Whether every object `make` registered is collected once `make` has returned and dropped its references. */
const collectable = async (make: (track: (o: object) => void) => Promise<void>): Promise<boolean> => {
  let tracked = 0;
  let finalized = 0;
  const registry = new FinalizationRegistry(() => void finalized++);
  await make((o) => {
    tracked++;
    registry.register(o, undefined);
  });
  for (let i = 0; i < 20 && finalized < tracked; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 5)); // finalizers run as tasks after a collection
  }
  return tracked > 0 && finalized === tracked;
};

/** A shutdown promise that is never resolved, held for the whole file (as deploy holds its own). */
const shutdown = new Promise<void>(() => {});
const opts = { instanceId: 'leak', producer: 'passk-processors/test', partitionOf, maxBatch: 20, maxWaitMs: 1 };

const eventSink = (): EventSink => ({ writeEvents: async () => {}, writeWindows: async () => {} });
/** Runs a decision topology until its consumer has caught up with what the log holds, then unsubscribes. */
const untilIdle = async (
  topology: (onIdleProbe: (p: () => Promise<boolean>) => void) => Observable<DecisionProgress>,
) => {
  let probe: (() => Promise<boolean>) | undefined;
  const sub = topology((p) => (probe = p)).subscribe();
  for (let i = 0; i < 500 && !(probe && (await probe())); i++) await new Promise((r) => setTimeout(r, 2));
  expect(probe && (await probe())).toBe(true);
  sub.unsubscribe();
};

describe('a finished topology is released', () => {
  const trialRun = (stop: Promise<unknown> | undefined) => async (track: (o: object) => void) => {
    const log = createMemoryLog();
    await log.publisher.publish(
      Array.from({ length: 200 }, (_, i) =>
        trial({ row: `r${i % 40}`, version: 'v1', attempt: Math.floor(i / 40), passed: i % 3 > 0 }),
      ),
    );
    const sink: TrialSink = { writeTrials: async () => {} };
    track(sink);
    const progress = await lastValueFrom(
      trialTopology(
        { source: log, publisher: log.publisher, sink },
        { ...opts, untilCaughtUpEveryMs: 2, ...(stop ? { stop } : {}) },
      ).pipe(toArray()),
    );
    expect(progress.reduce((a, p) => a + p.trials, 0)).toBe(200);
  };

  it('trial topology, with a caller’s stop that never resolves: nothing left on it, its state collectable', async () => {
    expect(await collectable(trialRun(shutdown))).toBe(true);
    expect(stopListeners(shutdown)).toBe(0);
  });

  it('trial topology without a stop', async () => {
    expect(await collectable(trialRun(undefined))).toBe(true);
  });

  it('trial topology without a stop whose consumer ends (as in the bench)', async () => {
    const events = Array.from({ length: 200 }, (_, i) =>
      trial({ row: `r${i % 40}`, version: 'v1', attempt: Math.floor(i / 40), passed: i % 3 > 0 }),
    );
    const finite: EventSource = {
      consumer: async () => ({
        batches: async function* () {
          for (let i = 0; i < events.length; i += 20)
            yield {
              topic: TOPICS.trials,
              partition: 0,
              lastOffset: i + 19,
              highWatermark: events.length,
              events: events
                .slice(i, i + 20)
                .map((event, j) => ({ topic: TOPICS.trials, partition: 0, offset: i + j, key: '', event })),
            };
        },
        commit: async () => {},
        committed: async () => new Map(),
        lag: async () => [],
        close: async () => {},
      }),
    };
    const publisher: EventPublisher = {
      publish: async () => {},
      publishRaw: async () => {},
      publishDeadLetters: async () => 0,
      close: async () => {},
    };
    expect(
      await collectable(async (track) => {
        const sink: TrialSink = { writeTrials: async () => {} };
        track(sink);
        const progress = await lastValueFrom(trialTopology({ source: finite, publisher, sink }, opts).pipe(toArray()));
        expect(progress.reduce((a, p) => a + p.trials, 0)).toBe(200);
      }),
    ).toBe(true);
  });

  it('trial topology that fails, with a caller’s stop that never resolves', async () => {
    expect(
      await collectable(async (track) => {
        const log = createMemoryLog();
        await log.publisher.publish([trial({ row: 'r1', version: 'v1', attempt: 0, passed: true })]);
        const sink: TrialSink = { writeTrials: () => Promise.reject(new Error('sink down')) };
        track(sink);
        const failed = await lastValueFrom(
          trialTopology({ source: log, publisher: log.publisher, sink }, { ...opts, stop: shutdown }),
        ).catch((e: unknown) => e);
        expect(String(failed)).toContain('sink down');
      }),
    ).toBe(true);
    expect(stopListeners(shutdown)).toBe(0);
  });

  const decisions = async (log: MemoryLog) => {
    await log.publisher.publish([datasetRow('d1', 'r1'), datasetRow('d1', 'r2')]);
    await log.publisher.publish(
      Array.from({ length: 60 }, (_, i) => trace({ at: T0 + i * 1000, fingerprint: `f${i % 7}`, passed: i % 4 > 0 })),
    );
  };

  it('datasets, windows and gates topologies, unsubscribed once idle', async () => {
    const log = createMemoryLog();
    await decisions(log);
    const ports = (sink: EventSink) => ({ source: log, publisher: log.publisher, sink });
    expect(
      await collectable(async (track) => {
        const sink = eventSink();
        track(sink);
        await untilIdle((onIdleProbe) => datasetTopology(ports(sink), { ...opts, stop: shutdown, onIdleProbe }));
      }),
    ).toBe(true);
    expect(
      await collectable(async (track) => {
        const sink = eventSink();
        track(sink);
        await untilIdle((onIdleProbe) => windowTopology(ports(sink), { ...opts, stop: shutdown, onIdleProbe }));
      }),
    ).toBe(true);
    expect(
      await collectable(async (track) => {
        const sink = eventSink();
        track(sink);
        await untilIdle((onIdleProbe) => gateTopology(ports(sink), { ...opts, stop: shutdown, onIdleProbe }));
      }),
    ).toBe(true);
    expect(stopListeners(shutdown)).toBe(0);
  });
});

describe('pullBatches', () => {
  it('keeps no batch it has handed on reachable while the stop is pending', async () => {
    const pending = new Promise<void>(() => {});
    const inFlight = createInFlight(10);
    const source: AsyncIterable<EventBatch> = {
      [Symbol.asyncIterator]: () => {
        let n = 0;
        return {
          next: async () => ({
            done: false,
            value: { topic: 't', partition: 0, lastOffset: n++, highWatermark: 1e9, events: [] },
          }),
        };
      },
    };
    let sub: Subscription | undefined;
    // 60 batches are handed on and committed (the first 50 tracked); then the window fills and the
    // stream waits for room, still running
    const released = await collectable(async (track) => {
      let seen = 0;
      await new Promise<void>((resolve) => {
        sub = pullBatches(source, inFlight, pending).subscribe((b) => {
          if (seen < 50) track(b);
          if (++seen <= 60) inFlight.release(1);
          if (seen === 60) resolve();
        });
      });
    });
    expect(sub?.closed).toBe(false);
    expect(released).toBe(true);
    expect(stopListeners(pending)).toBe(1); // the running stream's one listener, not one per batch
    sub!.unsubscribe();
    expect(stopListeners(pending)).toBe(0);
  });
});
