import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PasskConfig } from '../../deploy/config.ts';
import { rebuildStore } from '../../deploy/rebuild.ts';
import { openStore } from '../../deploy/store.ts';
import { CommitRejected } from '../../log/errors.ts';
import type { EventLog } from '../../processors/ports.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { createMemoryLog } from '../helpers/memoryLog.ts';
import { trial } from '../helpers/processorFixtures.ts';

/**
 * A store rebuild whose replay group loses its partitions midway (a commit refused as fenced: on Kafka, a rejoin
 * after the group's coordinator moved, or kafkajs restarting a crashed consumer). The replay's folds start empty, so
 * going on from the group's last commit would fold only a part of the log; the rebuild starts the replay over with
 * new groups, and the store ends as a rebuild without the fault leaves it (real chDB, the memory log).
 */
describe('passk rebuild when a replay commit is refused as fenced', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  const events = ['v1', 'v2'].flatMap((version) =>
    ['r1', 'r2', 'r3', 'r4'].flatMap((row) =>
      [0, 1, 2].map((attempt) => trial({ row, version, attempt, passed: (attempt + row.length) % 2 === 0 })),
    ),
  );

  /** The rebuilt store's tables, as text to compare. */
  const rebuilt = async (fenceFirstCommit: boolean) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-rebuild-fenced-'));
    dirs.push(dataDir);
    const memory = createMemoryLog();
    await memory.publisher.publish(events);
    const groups: string[] = [];
    let fenced = 0;
    const log: EventLog = {
      ...memory,
      consumer: async (options) => {
        groups.push(options.groupId);
        const c = await memory.consumer(options);
        if (!fenceFirstCommit || !options.groupId.startsWith(`passk-rebuild-${TOPICS.trials}.`)) return c;
        return {
          ...c,
          commit: async (positions) => {
            if (fenced++ === 0)
              throw new CommitRejected(positions.map(({ topic, partition }) => ({ topic, partition })));
            return c.commit(positions);
          },
        };
      },
    };
    const store = await openStore(PasskConfig.parse({ dataDir }));
    const restarts: string[] = [];
    try {
      const result = await rebuildStore({
        log,
        store,
        instanceId: 'r',
        maxWaitMs: 1,
        onRestart: (e) => restarts.push(e.message),
      });
      const table = async (query: string) =>
        JSON.stringify(await (await store.client.query({ query, format: 'JSONEachRow' })).json());
      return {
        result: { trials: result.trials, damaged: result.after.damaged, behind: result.after.behind.length },
        trials: await table('SELECT event_id, passed FROM trials FINAL ORDER BY event_id'),
        rowState: await table(
          'SELECT agent_version, row_id, seq, n, c, ungraded, class FROM row_state FINAL ORDER BY agent_version, row_id',
        ),
        restarts,
        trialGroups: groups.filter((g) => g.startsWith(`passk-rebuild-${TOPICS.trials}.`)),
      };
    } finally {
      await store.close();
    }
  };

  it('starts the replay over with new groups, and the store equals a rebuild without the fault', async () => {
    const clean = await rebuilt(false);
    const fenced = await rebuilt(true);
    expect(clean.restarts).toEqual([]);
    expect(fenced.restarts).toHaveLength(1);
    expect(fenced.restarts[0]).toMatch(/commit rejected/);
    expect(fenced.trialGroups).toEqual([`passk-rebuild-${TOPICS.trials}.r`, `passk-rebuild-${TOPICS.trials}.r.2`]);
    expect(fenced.result).toEqual({ ...clean.result, trials: fenced.result.trials });
    expect(fenced.trials).toBe(clean.trials);
    expect(fenced.rowState).toBe(clean.rowState);
    expect(JSON.parse(clean.trials)).toHaveLength(24);
  });
});
