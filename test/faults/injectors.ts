/**
 * Fault injectors at real boundaries: signals to real processes, and the network of a namespace
 * made by test/faults/cluster.ts (its veth link, nftables inside it, a tc qdisc on its veth).
 * Each injector returns a `heal` that undoes it; healing twice is harmless.
 *
 * Not here, and why:
 * - `tc netem` delay/loss/reorder: this kernel has no sch_netem (no modules, not built in). Loss is
 *   done with nftables (`numgen random`), delay as a bandwidth throttle (`tbf`, whose queue delays
 *   packets), and reordering not at all.
 * - A stalled ClickHouse *server* transport: no ClickHouse server can run on this machine (the
 *   store is chDB, in process), so there is no store connection to stall.
 */
import { readFileSync } from 'node:fs';
import type { Cluster, Netns, NsProcess } from './cluster.ts';
import { run } from './cluster.ts';

export type Heal = () => Promise<void> | void;

const signal = (p: NsProcess, sig: NodeJS.Signals) => {
  if (p.alive()) process.kill(p.pid(), sig);
};

/** SIGKILL; heal starts it again (same command, same data dir) once it is gone. */
export const kill = (p: NsProcess): Heal => {
  const gone = p.alive() ? new Promise<void>((r) => p.proc.once('exit', () => r())) : Promise.resolve();
  signal(p, 'SIGKILL');
  return async () => {
    await gone;
    if (!p.alive()) await p.restart();
  };
};

/** SIGSTOP (the process hangs: no heartbeats, no answers, sockets open); heal is SIGCONT. */
export const pause = (p: NsProcess): Heal => {
  signal(p, 'SIGSTOP');
  return () => signal(p, 'SIGCONT');
};

/** Cuts a namespace off the bridge (its link goes down: packets vanish, no resets); heal brings it up. */
export const partition = (ns: Netns): Heal => {
  run('ip', ['link', 'set', ns.hostVeth, 'down']);
  return () => void run('ip', ['link', 'set', ns.hostVeth, 'up']);
};

const TABLE = 'passk_fault';

/** Drops `percent` % of the packets into and out of a namespace, at random (nftables in the namespace). */
export const loss = (ns: Netns, percent: number): Heal => {
  const rules = [
    `add table inet ${TABLE}`,
    `add chain inet ${TABLE} in { type filter hook input priority 0 ; }`,
    `add chain inet ${TABLE} out { type filter hook output priority 0 ; }`,
    `add rule inet ${TABLE} in iifname "eth0" numgen random mod 100 < ${percent} drop`,
    `add rule inet ${TABLE} out oifname "eth0" numgen random mod 100 < ${percent} drop`,
  ];
  run('ip', ['netns', 'exec', ns.name, 'nft', rules.join('\n')]);
  return () => void run('ip', ['netns', 'exec', ns.name, 'nft', `delete table inet ${TABLE}`], { allowFail: true });
};

/**
 * A slow link both ways: a token bucket of `kbit` kbit/s with a queue of `latencyMs`, on both ends of
 * the namespace's veth (tbf; netem is not in this kernel). Big requests queue (delay); bursts beyond
 * the queue are dropped.
 */
export const throttle = (ns: Netns, kbit: number, latencyMs: number): Heal => {
  const qdisc = ['root', 'tbf', 'rate', `${kbit}kbit`, 'burst', '16kb', 'latency', `${latencyMs}ms`];
  run('tc', ['qdisc', 'add', 'dev', ns.hostVeth, ...qdisc]);
  run('ip', ['netns', 'exec', ns.name, 'tc', 'qdisc', 'add', 'dev', 'eth0', ...qdisc]);
  return () => {
    run('tc', ['qdisc', 'del', 'dev', ns.hostVeth, 'root'], { allowFail: true });
    run('ip', ['netns', 'exec', ns.name, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root'], { allowFail: true });
  };
};

/**
 * A forced rebalance: `join()` starts another member of the processor's consumer group (the caller
 * says how: usually a second `passk process` in the same namespace); heal stops it with SIGTERM
 * (it commits what it did and leaves), which is the second rebalance.
 */
export const rebalance = (join: () => NsProcess, diagnose?: (pid: number) => Promise<string>): Heal => {
  const member = join();
  return async () => {
    if (!member.alive()) return;
    const gone = new Promise<'gone'>((r) => member.proc.once('exit', () => r('gone')));
    const pid = member.pid();
    signal(member, 'SIGTERM');
    // Bounded: a member seen idle for 18 minutes after this SIGTERM (its handler installed, nothing pending, no word
    // in its log; a second SIGTERM by hand ended it at once) held the whole campaign until the test's timeout.
    // A member that does not leave fails the schedule here, saying so, instead of hanging the run.
    const late = await Promise.race([gone, new Promise<'late'>((r) => setTimeout(() => r('late'), MEMBER_STOP_MS))]);
    if (late === 'gone') return;
    let status = '';
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8')
        .split('\n')
        .filter((l) => /^(State|SigPnd|ShdPnd|SigBlk|SigCgt):/.test(l))
        .join('; ');
      // its native and JavaScript stacks, kept with the logs: where a member that ignores SIGTERM waits
      if (diagnose) status += `; ${await diagnose(pid)}`;
    } catch {
      status = 'no /proc entry';
    }
    signal(member, 'SIGKILL');
    await gone;
    throw new Error(
      `rebalance: the extra member (pid ${pid}) did not exit ${MEMBER_STOP_MS / 1000} s after SIGTERM (${status})`,
    );
  };
};
/** How long a rebalance's extra member may take to leave after SIGTERM (it commits and leaves in seconds). */
const MEMBER_STOP_MS = 120_000;

/** Heals the cluster as a whole: every stopped process continued, every killed broker restarted. */
export const healAll = async (cluster: Cluster): Promise<void> => {
  for (const p of [...cluster.nodes, cluster.registry]) {
    signal(p, 'SIGCONT');
    if (!p.alive()) await p.restart();
  }
};
