import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLogDatabase } from '../../log/embedded/database.ts';
import { createLogStore } from '../../log/embedded/store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Two connections to one log, as two processes (or the append worker) hold it. */
const twoConnections = () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-watermarks-'));
  dirs.push(dataDir);
  const open = () => {
    const db = openLogDatabase({ dataDir, synchronous: 'NORMAL', busyTimeoutMs: 5_000 });
    return { db, store: createLogStore(db, { defaultPartitions: 2, now: Date.now }) };
  };
  return [open(), open()] as const;
};
const first = (_key: string, _n: number) => 0;
const record = (topic: string, i: number) => ({ topic, key: `k${i}`, value: new Uint8Array([i]) });
const plain = (hw: ReadonlyMap<string, ReadonlyMap<number, number>>) =>
  Object.fromEntries([...hw].map(([t, m]) => [t, Object.fromEntries(m)]));

describe('the embedded log’s high watermarks, kept between reads', () => {
  it('move with every append, this connection’s or another’s, and not with a rolled-back one', () => {
    const [a, b] = twoConnections();
    a.store.append([record('t', 0)], first);
    expect(plain(a.store.highWatermarks(['t']))).toEqual({ t: { 0: 1, 1: 0 } });
    // kept: nothing moved
    expect(a.store.highWatermarks(['t'])).toBe(a.store.highWatermarks(['t']));
    // another connection's append
    b.store.append([record('t', 1), record('t', 2)], first);
    expect(plain(a.store.highWatermarks(['t']))).toEqual({ t: { 0: 3, 1: 0 } });
    // this connection's own, to another partition, then a new topic
    a.store.append([record('t', 3)], () => 1);
    expect(plain(a.store.highWatermarks(['t']))).toEqual({ t: { 0: 3, 1: 1 } });
    b.store.append([record('u', 4)], first);
    expect(plain(a.store.highWatermarks(['t', 'u']))).toEqual({ t: { 0: 3, 1: 1 }, u: { 0: 1, 1: 0 } });
    // an append rolled back, read inside its transaction and after it
    const inside: unknown[] = [];
    expect(() =>
      a.db.transaction(() => {
        a.store.append([record('t', 5)], first);
        inside.push(plain(a.store.highWatermarks(['t'])));
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(inside).toEqual([{ t: { 0: 4, 1: 1 } }]);
    expect(plain(a.store.highWatermarks(['t']))).toEqual({ t: { 0: 3, 1: 1 } });
    expect(plain(b.store.highWatermarks(['t']))).toEqual({ t: { 0: 3, 1: 1 } });
    a.db.close();
    b.db.close();
  });
});
