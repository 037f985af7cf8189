import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedEventLog } from '../../log/embedded/embeddedLog.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { gateTopology, type EventSink } from '../../processors/index.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { EventLog } from '../../processors/ports.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import {
  expectEvictingDecidesAsNeverEvicting,
  expectEvictionTurnedOffDecides,
  phases,
} from '../helpers/gateEvictPhases.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { T0 } from '../helpers/processorFixtures.ts';

/**
 * Issue 26, item 6, through the gates topology on the memory log of the unit tests and the embedded SQLite log
 * (test/helpers/gateEvictPhases.ts; gateEvict.kafka.test.ts on Kafka): a comparison naming a version a verdict
 * evicted waits for its reload from passk.rowstate and decides, by the end of the same phase, what the gates that
 * never evict decide, also across a restart.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const backends: Record<string, () => { log: EventLog; reopen?: () => EventLog }> = {
  memory: () => ({ log: createMemoryLog({ partitions: 3 }) }),
  embedded: () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-evict-'));
    dirs.push(dir);
    const open = () =>
      createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL', partitions: 3, consumer: { pollMs: 5 } });
    return { log: open(), reopen: open };
  },
};

describe.each(Object.keys(backends))('gates that evict row tables (%s log)', (backend) => {
  it('reload an evicted version before a later comparison names it, and decide as gates that never evict', async () => {
    await expectEvictingDecidesAsNeverEvicting(backends[backend]!);
  });
  it('restarted with eviction off, reload the closed runs a snapshot left out and decide as gates that never evict', async () => {
    await expectEvictionTurnedOffDecides(backends[backend]!);
  });
});

/**
 * The embedded log's gates forget decided ids (docs/processors.md, "Decided ids stay in the log"): their snapshots
 * hold no decided id and no verdict id, and a decided comparison declared again after a restart (its id no longer
 * in memory, nor in the snapshot the restore starts from) is looked up in passk.decisions by key and not decided
 * again.
 */
describe('gates on the embedded log', () => {
  it('snapshot no decided id, and do not decide a decided comparison declared again after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'passk-forget-'));
    dirs.push(dir);
    const open = () =>
      createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL', partitions: 3, consumer: { pollMs: 5 } });
    const sink: EventSink = { writeEvents: async () => {}, writeWindows: async () => {} };
    const runOnce = async (events: readonly PasskEvent[]) => {
      const log = open();
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      let probe: (() => Promise<boolean>) | undefined;
      const done = lastValueFrom(
        gateTopology(
          { source: log, publisher: log.publisher, sink },
          {
            instanceId: 'forget',
            producer: 'passk-processors/test',
            partitionOf,
            stop: stopped,
            onIdleProbe: (p) => (probe = p),
          },
        ),
        { defaultValue: undefined },
      );
      await log.publisher.publish(events);
      for (let i = 0; i < 3_000 && !(probe && (await probe())); i++) await new Promise((r) => setTimeout(r, 5));
      expect(probe && (await probe())).toBe(true);
      stop();
      await done; // a clean stop snapshots every partition folded since the last
      const verdicts: GateEvaluated[] = [];
      const snapshots: GateBookSnapshot[] = [];
      for (const topic of [TOPICS.decisions, TOPICS.rowstate])
        await readToEnd(log, {
          topic,
          groupId: `check-${Math.random().toString(36).slice(2, 8)}`,
          onEvent: (e) => {
            if (e.type === 'GateEvaluated') verdicts.push(e);
            if (e.type === 'GateBookSnapshot') snapshots.push(e);
          },
        });
      await log.close();
      return { verdicts, snapshots };
    };
    const first = await runOnce(phases[0]!);
    expect(first.verdicts.map((v) => v.gate_id)).toEqual(['gate-1']);
    const declaredAgain = phases[0]!.find((e) => e.type === 'ComparisonDeclared')!;
    const again = { ...declaredAgain, event_id: deterministicEventId(T0 + 9_000, 'again'), occurred_at: T0 + 9_000 };
    const second = await runOnce([again]);
    // decided once: the restored book did not hold gate-1's id, the look-up in the log found its verdict
    expect(second.verdicts.map((v) => v.event_id)).toEqual(first.verdicts.map((v) => v.event_id));
    // every snapshot written forgot the decided ids: no decided id, no verdict id
    expect(second.snapshots.length).toBeGreaterThan(first.snapshots.length);
    for (const s of second.snapshots) {
      expect(s.forgot_decided).toBe(true);
      expect(s.book.decided).toBeUndefined();
      expect(s.book.verdicts).toEqual({});
    }
    // and the declaration again left the prefix once looked up: no snapshot holds gate-1 open
    for (const s of second.snapshots) expect(s.book.comparisons['gate-1']).toBeUndefined();
  });
});
