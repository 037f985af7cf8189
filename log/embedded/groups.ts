import { CommitRejected } from '../errors.ts';
import type { Db } from './database.ts';
import { tpKey } from '../../schemas/topics.ts';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface Member {
  readonly groupId: string;
  readonly memberId: string;
  readonly topics: readonly string[];
  readonly sessionMs: number;
}

export interface Plan {
  /** Partitions whose lease this member holds now (including ones it must give up). */
  readonly owned: TopicPartition[];
  /** Owned partitions that another live member should have: revoke, then `release`. */
  readonly toRelease: TopicPartition[];
  /** Partitions assigned to this member that another live member still holds. */
  readonly waiting: number;
}

/**
 * Consumer groups on the embedded log: membership rows with an expiry (renewed by heartbeats),
 * one lease row per (group, topic, partition) naming its owner, and committed positions.
 * A member is dead when its expiry has passed or its process (same machine: the database is a
 * local file) no longer exists. A lease is free when its owner is dead. Every member computes the
 * same round-robin assignment over the live members, takes the free partitions assigned to it,
 * and gives back (after onRevoked) the ones assigned to others.
 */
export interface GroupStore {
  heartbeat(m: Member): void;
  plan(m: Member, partitionsOf: (topic: string) => number): Plan;
  release(m: Member, tps: readonly TopicPartition[]): void;
  leave(m: Member): void;
  commit(m: Member, positions: readonly { topic: string; partition: number; nextOffset: number }[]): void;
  committed(groupId: string, topic: string): Map<number, number>;
}

const processAlive = (pid: number): boolean => {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export const createGroupStore = (db: Db, now: () => number): GroupStore => {
  const q = {
    upsertMember: db.prepare(
      `INSERT INTO group_members (group_id, member_id, pid, topics, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (group_id, member_id) DO UPDATE SET expires_at = excluded.expires_at, topics = excluded.topics`,
    ),
    members: db.prepare<[string], { member_id: string; pid: number; topics: string; expires_at: number }>(
      'SELECT member_id, pid, topics, expires_at FROM group_members WHERE group_id = ? ORDER BY member_id',
    ),
    deleteMember: db.prepare('DELETE FROM group_members WHERE group_id = ? AND member_id = ?'),
    leases: db.prepare<[string], { topic: string; partition: number; member_id: string }>(
      'SELECT topic, partition, member_id FROM group_leases WHERE group_id = ?',
    ),
    owner: db.prepare<[string, string, number], { member_id: string }>(
      'SELECT member_id FROM group_leases WHERE group_id = ? AND topic = ? AND partition = ?',
    ),
    take: db.prepare(
      `INSERT INTO group_leases (group_id, topic, partition, member_id) VALUES (?, ?, ?, ?)
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET member_id = excluded.member_id`,
    ),
    release: db.prepare(
      'DELETE FROM group_leases WHERE group_id = ? AND topic = ? AND partition = ? AND member_id = ?',
    ),
    releaseAll: db.prepare('DELETE FROM group_leases WHERE group_id = ? AND member_id = ?'),
    commit: db.prepare(
      `INSERT INTO group_offsets (group_id, topic, partition, next_offset, committed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = excluded.next_offset, committed_at = excluded.committed_at`,
    ),
    committed: db.prepare<[string, string], { partition: number; next_offset: number }>(
      'SELECT partition, next_offset FROM group_offsets WHERE group_id = ? AND topic = ?',
    ),
  };

  const heartbeat = (m: Member): void => {
    q.upsertMember.run(m.groupId, m.memberId, process.pid, JSON.stringify(m.topics), now() + m.sessionMs);
  };

  // Membership and leases need not survive a power cut: after one, every member is dead (a lease is free when its
  // owner is), so a heartbeat or a plan is written without an fsync of its own. In WAL mode the next synced commit
  // (an append, an offset commit) syncs it with its own frames, so nothing synced ever rests on an unsynced write.
  // Each of about ten consumers of a process beats or plans once a second: one fsync each on the main thread.
  const level = Number(db.pragma('synchronous', { simple: true }));
  const unsynced = db.prepare('PRAGMA synchronous = NORMAL');
  const synced = db.prepare(`PRAGMA synchronous = ${level}`);
  const withoutFsync = <T>(write: () => T): T => {
    if (level <= 1 || db.inTransaction) return write(); // NORMAL or OFF already, or inside a synced transaction
    unsynced.run();
    try {
      return write();
    } finally {
      synced.run();
    }
  };

  const plan = db.transaction((m: Member, partitionsOf: (topic: string) => number): Plan => {
    heartbeat(m);
    const t = now();
    const live: { id: string; topics: Set<string> }[] = [];
    for (const row of q.members.all(m.groupId)) {
      if (row.expires_at >= t && processAlive(row.pid))
        live.push({ id: row.member_id, topics: new Set(JSON.parse(row.topics) as string[]) });
      else q.deleteMember.run(m.groupId, row.member_id);
    }
    const liveIds = new Set(live.map((x) => x.id));
    const topics = [...new Set(live.flatMap((x) => [...x.topics]))].sort();
    const desired = new Set<string>();
    let turn = 0; // round-robin over all (topic, partition) pairs, in a fixed order, among subscribers
    for (const topic of topics) {
      const candidates = live.filter((x) => x.topics.has(topic));
      for (let partition = 0; partition < partitionsOf(topic); partition++) {
        if (candidates[turn++ % candidates.length]!.id === m.memberId) desired.add(tpKey({ topic, partition }));
      }
    }
    const owners = new Map(q.leases.all(m.groupId).map((l) => [tpKey(l), l.member_id]));
    const owned: TopicPartition[] = [];
    const toRelease: TopicPartition[] = [];
    let waiting = 0;
    for (const topic of topics)
      for (let partition = 0; partition < partitionsOf(topic); partition++) {
        const tp = { topic, partition };
        const owner = owners.get(tpKey(tp));
        const wanted = desired.has(tpKey(tp));
        if (owner === m.memberId) {
          owned.push(tp);
          if (!wanted) toRelease.push(tp);
        } else if (wanted && (owner === undefined || !liveIds.has(owner))) {
          q.take.run(m.groupId, topic, partition, m.memberId);
          owned.push(tp);
        } else if (wanted) waiting++;
      }
    return { owned, toRelease, waiting };
  });

  const commit = db.transaction(
    (m: Member, positions: readonly { topic: string; partition: number; nextOffset: number }[]) => {
      const notOwned = positions.filter((p) => q.owner.get(m.groupId, p.topic, p.partition)?.member_id !== m.memberId);
      if (notOwned.length > 0) throw new CommitRejected(notOwned.map(({ topic, partition }) => ({ topic, partition })));
      const t = now();
      for (const p of positions) q.commit.run(m.groupId, p.topic, p.partition, p.nextOffset, t);
      heartbeat(m);
    },
  );

  return {
    heartbeat: (m) => withoutFsync(() => heartbeat(m)),
    plan: (m, partitionsOf) => withoutFsync(() => plan.immediate(m, partitionsOf)),
    release: (m, tps) =>
      db
        .transaction(() => {
          for (const tp of tps) q.release.run(m.groupId, tp.topic, tp.partition, m.memberId);
        })
        .immediate(),
    leave: (m) =>
      db
        .transaction(() => {
          q.releaseAll.run(m.groupId, m.memberId);
          q.deleteMember.run(m.groupId, m.memberId);
        })
        .immediate(),
    commit: (m, positions) => commit.immediate(m, positions),
    committed: (groupId, topic) => new Map(q.committed.all(groupId, topic).map((r) => [r.partition, r.next_offset])),
  };
};
