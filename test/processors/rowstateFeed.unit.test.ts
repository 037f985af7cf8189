import { describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { startProcessors } from '../../deploy/processors.ts';
import { createRowstateFeed } from '../../processors/operators/rowstateFeed.ts';
import { jsonCodec } from '../../schemas/codec.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import type { ConsumerOptions, EventLog } from '../../processors/ports.ts';
import { createMemoryLog, type MemoryLog } from '../helpers/memoryLog.ts';
import { comparison, runOf } from '../helpers/feedbackLoop.ts';

const config = PasskConfig.parse({ dataDir: '/nonexistent' });
const ROWS = Array.from({ length: 12 }, (_, i) => `r${i}`);
const FAILS = ROWS.slice(0, 8); // the candidate fails 8 of the 12 rows the baseline passes
const DROP = { rules: { max_pass_at_1_drop: 0.1 } }; // so its gate fails

/** The log, with the consumers the processors open (their groups and topics) written down. */
const watched = (log: MemoryLog) => {
  const opened: { groupId: string; topics: readonly string[] }[] = [];
  const wrapped: EventLog = {
    ...log,
    publisher: log.publisher,
    codec: log.codec,
    consumer: (o: ConsumerOptions) => {
      opened.push({ groupId: o.groupId, topics: o.topics });
      return log.consumer(o);
    },
  };
  return { log: wrapped, opened };
};
const verdicts = (log: MemoryLog): Promise<PasskEvent[]> =>
  Promise.all(
    log
      .records(TOPICS.decisions)
      .flat()
      .map((r) => jsonCodec.decode(r.value)),
  ).then((es) => es.filter((e) => e.type === 'GateEvaluated'));
const gateTails = (opened: { groupId: string; topics: readonly string[] }[]) =>
  opened.filter((c) => c.groupId.startsWith('passk-gates') && c.topics.includes(TOPICS.rowstate));

describe('RowstateFeed', () => {
  it('is loaded once every writer owns every partition, and partial for good once one is assigned fewer', async () => {
    const feed = createRowstateFeed({ writers: ['trials', 'windows'] });
    let loaded = false;
    void feed.loaded.then(() => (loaded = true));
    feed.assigned('trials', [0, 1, 2, 3], 4);
    await Promise.resolve();
    expect(loaded).toBe(false); // the windows have not restored yet
    feed.assigned('windows', [0, 1], 2);
    await feed.loaded;
    expect(feed.isPartial()).toBe(false);
    // the windows get a partition more (the topic grew): two of three, so another member writes one
    feed.assigned('windows', [1], 3);
    await feed.partial;
    expect(feed.isPartial()).toBe(true);
    feed.assigned('windows', [2], 3); // all again: still partial (the tail is kept)
    expect(feed.isPartial()).toBe(true);
  });

  it('turns partial when a writer is first assigned fewer than all its partitions', async () => {
    const feed = createRowstateFeed({ writers: ['trials'] });
    feed.assigned('trials', [0, 2], 4);
    await feed.partial;
    expect(feed.isPartial()).toBe(true);
  });

  it('turns partial when a writer loses partitions with no new assignment (a member joined on Kafka)', async () => {
    const feed = createRowstateFeed({ writers: ['trials'] });
    feed.assigned('trials', [0, 1], 2);
    await feed.loaded;
    expect(feed.isPartial()).toBe(false);
    feed.revoked('trials', [1]);
    await feed.partial;
    expect(feed.isPartial()).toBe(true);
  });

  it('turns partial when a writer is given no partition in time', async () => {
    const feed = createRowstateFeed({ writers: ['trials', 'windows'], assignedWithinMs: 5 });
    feed.assigned('trials', [0], 1);
    await feed.partial;
    expect(feed.isPartial()).toBe(true);
  });

  it('waits for a writer whose restore is long (restoring), however long', async () => {
    const feed = createRowstateFeed({ writers: ['trials'], assignedWithinMs: 5 });
    feed.restoring('trials');
    await new Promise((r) => setTimeout(r, 30));
    expect(feed.isPartial()).toBe(false);
    feed.assigned('trials', [0], 1);
    await feed.loaded;
    expect(feed.isPartial()).toBe(false);
  });

  it('hands every push to its reader, at once', () => {
    const feed = createRowstateFeed({ writers: ['trials'] });
    const seen: number[] = [];
    const off = feed.follow((events) => seen.push(events.length));
    feed.push([]);
    feed.push(runOf('v1', 'd1', ['r1'], { k: 2 }));
    off();
    feed.push(runOf('v1', 'd1', ['r1'], { k: 1 }));
    expect(seen).toEqual([2]);
  });
});

describe('the gates fed in process (in-memory log)', () => {
  it('decide from the trials of this process without reading passk.rowstate back, and once across restarts', async () => {
    const memory = createMemoryLog();
    const { log, opened } = watched(memory);
    await memory.publisher.publish([
      ...runOf('base', 'd1', ROWS),
      ...runOf('cand', 'd1', ROWS, { fails: FAILS }),
      comparison('g1', 'd1', 'base', 'cand', {
        dataset_id: undefined,
        rows: ROWS.length,
        confirmation_attempts: 0,
        ...DROP,
      }),
    ]);
    const drain = async () =>
      (await startProcessors(config, { log, store: false, untilCaughtUp: true, maxWaitMs: 1 })).done;
    await drain();
    expect(gateTails(opened)).toEqual([]);
    const first = await verdicts(memory);
    expect(first.map((v) => v.type === 'GateEvaluated' && [v.gate_id, v.verdict])).toEqual([['g1', 'fail']]);
    // a restart restores the row table from the trials' own restore, and decides nothing again
    await memory.publisher.publish(runOf('other', 'd1', ROWS));
    await drain();
    expect(gateTails(opened)).toEqual([]);
    expect(await verdicts(memory)).toHaveLength(1);
  });

  it('tail passk.rowstate once another member writes some of it, and see the rows that member folded', async () => {
    const memory = createMemoryLog();
    const { log, opened } = watched(memory);
    // another process runs the trials alone: it takes some trial partitions from this one
    const other = await startProcessors(config, { log: memory, store: false, only: ['trials'], instanceId: 'other' });
    const mine = await startProcessors(config, { log, store: false, instanceId: 'mine', maxWaitMs: 1 });
    try {
      await memory.publisher.publish([
        ...runOf('base', 'd1', ROWS),
        ...runOf('cand', 'd1', ROWS, { fails: FAILS }),
        comparison('g2', 'd1', 'base', 'cand', {
          dataset_id: undefined,
          rows: ROWS.length,
          confirmation_attempts: 0,
          ...DROP,
        }),
      ]);
      for (let i = 0; i < 400 && (await verdicts(memory)).length === 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      const decided = await verdicts(memory);
      expect(decided.map((v) => v.type === 'GateEvaluated' && [v.gate_id, v.verdict])).toEqual([['g2', 'fail']]);
      expect(gateTails(opened)).toHaveLength(1);
      expect((await other.stats()).trials).toBeGreaterThan(0); // the other member folded some of the trials
    } finally {
      mine.stop();
      other.stop();
      await Promise.all([mine.done, other.done]);
    }
  });

  it('tail passk.rowstate once a member that joins later takes trial partitions from this process', async () => {
    const memory = createMemoryLog();
    const { log, opened } = watched(memory);
    const mine = await startProcessors(config, { log, store: false, instanceId: 'mine', maxWaitMs: 1 });
    let other: Awaited<ReturnType<typeof startProcessors>> | undefined;
    try {
      await memory.publisher.publish(runOf('base', 'd1', ROWS));
      await mine.caughtUp();
      expect(gateTails(opened)).toEqual([]); // alone so far: fed in process
      other = await startProcessors(config, { log: memory, store: false, only: ['trials'], instanceId: 'other' });
      await memory.publisher.publish([
        ...runOf('cand', 'd1', ROWS, { fails: FAILS }),
        comparison('g3', 'd1', 'base', 'cand', {
          dataset_id: undefined,
          rows: ROWS.length,
          confirmation_attempts: 0,
          ...DROP,
        }),
      ]);
      for (let i = 0; i < 400 && (await verdicts(memory)).length === 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      const decided = await verdicts(memory);
      expect(decided.map((v) => v.type === 'GateEvaluated' && [v.gate_id, v.verdict])).toEqual([['g3', 'fail']]);
      expect((await other.stats()).trials).toBeGreaterThan(0); // the member that joined folded some
      expect(gateTails(opened)).toHaveLength(1);
    } finally {
      mine.stop();
      other?.stop();
      await Promise.all([mine.done, other?.done]);
    }
  });
});
