/**
 * A three-node Kafka cluster (combined KRaft broker+controller nodes, ids 1..3, static quorum) and an
 * Apicurio registry, each in its own network namespace, wired by veth pairs to a private bridge in the
 * root namespace (`10.77.<n>.0/24`, the root side is `.1`). Processors get namespaces of their own
 * (`addNamespace`), so faults can be put between any two parts (test/faults/injectors.ts).
 *
 * Needs root (`ip netns`), the Kafka classpath that deploy/local/fetch.sh puts in
 * `.local-stack/kafka/libs` and the Apicurio jar in `.local-stack/apicurio`. Every name carries a
 * per-run id, so two runs never collide, and nothing touches the single-node stack on 127.0.0.1.
 * `stop()` (also run on exit, SIGINT and SIGTERM) kills every process, deletes the namespaces,
 * the bridge and the temp dir.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';

const repo = join(import.meta.dirname, '..', '..');
const here = join(repo, 'deploy', 'local');

/** Runs a command without blocking the event loop, throwing with its output when it fails. */
const runAsync = (cmd: string, args: string[]) =>
  new Promise<void>((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (out += c.toString()));
    p.once('error', reject);
    p.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}: ${out}`)),
    );
  });

/** Runs a command, throwing with its stderr when it fails. */
export const run = (cmd: string, args: string[], opts: { allowFail?: boolean } = {}): string => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0 && !opts.allowFail)
    throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}: ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout ?? '';
};

export interface Netns {
  readonly name: string;
  /** The veth end on the bridge (root namespace): faults on it cut or slow the whole namespace. */
  readonly hostVeth: string;
  readonly ip: string;
}

export interface NsProcess {
  readonly name: string;
  readonly ns: Netns;
  proc: ChildProcess;
  /** Set while a fault killed it on purpose (a supervisor leaves it down until the heal). */
  killedByUs?: boolean;
  readonly pid: () => number;
  readonly alive: () => boolean;
  /** Starts it again (same command, same data) after a kill. */
  restart(): Promise<void>;
}

export interface Cluster {
  readonly id: string;
  readonly dir: string;
  /** `10.77.n.11:9092,…` */
  readonly brokers: string;
  readonly registryUrl: string;
  readonly nodes: NsProcess[];
  readonly registry: NsProcess;
  /** A fresh namespace on the bridge (for a processor), with a unique suffix. */
  addNamespace(suffix: string): Netns;
  /** Spawns `cmd args` inside `ns`; stdout+stderr go to `<dir>/logs/<name>.log`. */
  spawnIn(ns: Netns, name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): NsProcess;
  /** Waits until all three brokers answer and form the cluster. */
  waitForBrokers(timeoutMs?: number): Promise<void>;
  /** Tears everything down; `keepLogs` moves the logs to a directory it returns first. */
  stop(opts?: { keepLogs?: boolean }): string | undefined;
}

const findJava21 = (): string => {
  const jvm = '/usr/lib/jvm';
  for (const d of readdirSync(jvm).sort().reverse()) {
    const bin = join(jvm, d, 'bin', 'java');
    if (!existsSync(bin)) continue;
    const out = spawnSync(bin, ['-XshowSettings:properties', '-version'], { encoding: 'utf8' }).stderr;
    const m = /java\.specification\.version = (\d+)/.exec(out);
    if (m && Number(m[1]) >= 21) return bin;
  }
  throw new Error('Apicurio needs Java 21+; none found under /usr/lib/jvm');
};

const usedSubnets = (): Set<number> => {
  const out = run('ip', ['-4', '-o', 'addr']);
  return new Set([...out.matchAll(/inet 10\.77\.(\d+)\./g)].map((m) => Number(m[1])));
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const until = async (ready: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(250);
  }
};

export interface ClusterOptions {
  /**
   * Where the Kafka libs and the Apicurio jar are. @default <repo>/.local-stack, else, in a git worktree, the main
   * checkout's .local-stack
   */
  readonly stackDir?: string;
  readonly startTimeoutMs?: number;
}

/** The main checkout of a git worktree (its `.git` is a file naming `<main>/.git/worktrees/<name>`), if this is one. */
const mainCheckout = (): string | undefined => {
  const dotGit = join(repo, '.git');
  if (!existsSync(dotGit) || !statSync(dotGit).isFile()) return undefined;
  return /^gitdir: (.*)\/\.git\/worktrees\//m.exec(readFileSync(dotGit, 'utf8'))?.[1];
};

const defaultStackDir = () => {
  const main = mainCheckout();
  for (const d of [process.env.PASSK_STACK_DIR, join(repo, '.local-stack'), main && join(main, '.local-stack')])
    if (d && existsSync(join(d, 'kafka', 'libs'))) return d;
  throw new Error('no Kafka classpath: run deploy/local/fetch.sh first (it fills .local-stack/kafka/libs)');
};

export const startCluster = async (opts: ClusterOptions = {}): Promise<Cluster> => {
  let stack = opts.stackDir ?? defaultStackDir();
  const timeout = opts.startTimeoutMs ?? 300_000;
  const id = randomBytes(2).toString('hex');
  const used = usedSubnets();
  const free = Array.from({ length: 254 }, (_, i) => i + 1).filter((n) => !used.has(n));
  if (free.length === 0) throw new Error('no free 10.77.n.0/24 subnet');
  const subnet = `10.77.${free[Math.floor(Math.random() * free.length)]}`;
  const dir = mkdtempSync(join(tmpdir(), `passk-faults-${id}-`));
  mkdirSync(join(dir, 'logs'));
  const bridge = `pk${id}br`;
  const namespaces: Netns[] = [];
  const processes: NsProcess[] = [];
  let stopped = false;
  let hostIndex = 30;

  const stop = (o: { keepLogs?: boolean } = {}): string | undefined => {
    if (stopped) return;
    stopped = true;
    for (const p of processes)
      try {
        if (p.alive()) process.kill(p.pid(), 'SIGCONT');
        if (p.alive()) process.kill(p.pid(), 'SIGKILL');
      } catch {
        /* already gone */
      }
    // wait (briefly) for the kills to land, so no process holds a namespace or the temp dir
    const deadline = Date.now() + 10_000;
    while (processes.some((p) => p.alive()) && Date.now() < deadline) spawnSync('sleep', ['0.1']);
    for (const ns of namespaces) {
      run('ip', ['link', 'del', ns.hostVeth], { allowFail: true });
      run('ip', ['netns', 'del', ns.name], { allowFail: true });
    }
    run('ip', ['link', 'del', bridge], { allowFail: true });
    let kept: string | undefined;
    if (o.keepLogs) {
      kept = mkdtempSync(join(tmpdir(), `passk-faults-logs-${id}-`));
      renameSync(join(dir, 'logs'), join(kept, 'logs'));
    }
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    return kept;
  };
  const onSignal = (sig: NodeJS.Signals) => {
    stop();
    process.kill(process.pid, sig);
  };
  const onExit = () => void stop();
  process.on('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const addNamespace = (suffix: string, host?: number): Netns => {
    const n = host ?? hostIndex++;
    const name = `pk${id}${suffix}`;
    const hostVeth = `pk${id}${suffix}h`;
    const peer = `pk${id}${suffix}p`;
    const ip = `${subnet}.${n}`;
    run('ip', ['netns', 'add', name]);
    const ns = { name, hostVeth, ip };
    namespaces.push(ns);
    run('ip', ['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', peer]);
    run('ip', ['link', 'set', peer, 'netns', name]);
    run('ip', ['-n', name, 'link', 'set', peer, 'name', 'eth0']);
    run('ip', ['link', 'set', hostVeth, 'master', bridge]);
    run('ip', ['link', 'set', hostVeth, 'up']);
    run('ip', ['-n', name, 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    run('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
    run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    return ns;
  };

  const spawnIn = (ns: Netns, name: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): NsProcess => {
    const start = () => {
      const out = openSync(join(dir, 'logs', `${name}.log`), 'a');
      // `ip netns exec` execs the command: the child's pid is the command's pid
      const proc = spawn('ip', ['netns', 'exec', ns.name, cmd, ...args], {
        stdio: ['ignore', out, out],
        env: env ?? process.env,
      });
      closeSync(out);
      return proc;
    };
    let exited = false;
    const watch = (p: ChildProcess) => {
      exited = false;
      p.once('exit', () => (exited = true));
    };
    const handle: NsProcess = {
      name,
      ns,
      proc: start(),
      pid: () => handle.proc.pid!,
      alive: () => !exited,
      restart: async () => {
        if (!exited) throw new Error(`${name} is still running`);
        handle.proc = start();
        watch(handle.proc);
      },
    };
    watch(handle.proc);
    processes.push(handle);
    return handle;
  };

  try {
    // the run's own copy of the binaries (hard links: no space, no time), so that whatever replaces .local-stack
    // meanwhile (a fetch.sh; in the long campaign, a git checkout that swapped the directory for a link) cannot break
    // a broker's restart ("Could not find or load main class kafka.Kafka", then a registry that timed out)
    const own = join(dir, 'stack');
    mkdirSync(own);
    for (const part of ['kafka', 'apicurio'])
      if (spawnSync('cp', ['-al', join(stack, part), join(own, part)]).status !== 0)
        run('cp', ['-a', join(stack, part), join(own, part)]);
    stack = own;
    run('ip', ['link', 'add', bridge, 'type', 'bridge']);
    run('ip', ['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
    run('ip', ['link', 'set', bridge, 'up']);

    // ---- Kafka: three combined nodes -------------------------------------------------------
    const ids = [1, 2, 3];
    const nodeIp = (n: number) => `${subnet}.${10 + n}`;
    const voters = ids.map((n) => `${n}@${nodeIp(n)}:9093`).join(',');
    const clusterId = randomBytes(16).toString('base64url');
    const template = readFileSync(join(import.meta.dirname, 'server.properties'), 'utf8');
    const log4j = `-Dlog4j2.configurationFile=${join(here, 'log4j2.properties')}`;
    const cp = `${stack}/kafka/libs/*`;
    const formats: Promise<void>[] = [];
    const specs = ids.map((n) => {
      const ns = addNamespace(`k${n}`, 10 + n);
      const data = join(dir, `kafka-${n}`);
      const props = join(dir, `server-${n}.properties`);
      writeFileSync(
        props,
        template
          .replaceAll('@NODE_ID@', String(n))
          .replaceAll('@VOTERS@', voters)
          .replaceAll('@IP@', nodeIp(n))
          .replaceAll('@DATA@', data),
      );
      formats.push(
        // --cluster-id=ID, not "-t ID": an id that starts with "-" (1 in 32) reads as a flag (a CI run failed on
        // one; deploy/local/up.sh learned the same)
        runAsync('java', [
          log4j,
          '-cp',
          cp,
          'kafka.tools.StorageTool',
          'format',
          `--cluster-id=${clusterId}`,
          '-c',
          props,
        ]),
      );
      return { n, ns, props };
    });
    await Promise.all(formats);
    const nodes = specs.map(({ n, ns, props }) =>
      spawnIn(ns, `kafka-${n}`, 'java', [
        '-Xms128m',
        '-Xmx384m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-XX:+ExitOnOutOfMemoryError',
        '-Djava.awt.headless=true',
        log4j,
        '-cp',
        cp,
        'kafka.Kafka',
        props,
      ]),
    );

    // ---- Apicurio registry ------------------------------------------------------------------
    const regNs = addNamespace('r', 20);
    const registry = spawnIn(regNs, 'registry', findJava21(), [
      '-Xms64m',
      '-Xmx384m',
      '-XX:+ExitOnOutOfMemoryError',
      '-Djava.util.logging.manager=org.jboss.logmanager.LogManager',
      `-Dquarkus.http.host=${regNs.ip}`,
      '-Dquarkus.http.port=8080',
      `-Dquarkus.management.host=${regNs.ip}`,
      '-Dquarkus.management.port=9000',
      '-Dquarkus.http.access-log.enabled=false',
      '-jar',
      join(stack, 'apicurio', 'quarkus-run.jar'),
    ]);
    const brokers = ids.map((n) => `${nodeIp(n)}:9092`).join(',');
    const registryUrl = `http://${regNs.ip}:8080/apis/ccompat/v7`;

    // each broker asked on its own: any one broker's view is not enough, since a SIGKILLed broker stays in the
    // cluster's metadata until its session times out (9 s), and the restarted one may not listen yet (CI, seed
    // 23237640: the check's reads were refused by broker 3 for 8 s after this wait had returned)
    const clients = ids.map(
      (n) =>
        new Kafka({
          clientId: `passk-faults-ready-${id}-${n}`,
          brokers: [`${nodeIp(n)}:9092`],
          logLevel: logLevel.NOTHING,
          connectionTimeout: 2_000,
          requestTimeout: 5_000,
          retry: { retries: 0 },
        }),
    );
    const answers = async (kafka: Kafka) => {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const { brokers: live } = await admin.describeCluster();
        return live.length === ids.length;
      } catch {
        return false;
      } finally {
        await admin.disconnect().catch(() => {});
      }
    };
    const waitForBrokers = async (ms = timeout) => {
      await until(
        async () => {
          const dead = nodes.find((n) => !n.alive());
          if (dead)
            throw new Error(`${dead.name} exited during start-up; see ${join(dir, 'logs', dead.name + '.log')}`);
          return (await Promise.all(clients.map(answers))).every(Boolean);
        },
        ms,
        'three Kafka brokers',
      );
    };
    const t0 = Date.now();
    await Promise.all([
      waitForBrokers(),
      until(
        async () => {
          if (!registry.alive()) throw new Error(`the registry exited; see ${join(dir, 'logs', 'registry.log')}`);
          return fetch(`${registryUrl}/subjects`, { signal: AbortSignal.timeout(3_000) })
            .then((r) => r.ok)
            .catch(() => false);
        },
        timeout,
        'the registry',
      ),
    ]);
    process.stderr.write(`faults: cluster ${id} (${subnet}.0/24) up in ${Date.now() - t0} ms\n`);
    return {
      id,
      dir,
      brokers,
      registryUrl,
      nodes,
      registry,
      addNamespace: (suffix) => addNamespace(suffix),
      spawnIn,
      waitForBrokers,
      stop,
    };
  } catch (e) {
    stop();
    throw e;
  }
};

// `node --import tsx test/faults/cluster.ts` (deploy/local/cluster.sh): starts a cluster, prints where it is, and
// holds it until Ctrl-C or SIGTERM, which tear it all down.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const c = await startCluster();
  const p = c.addNamespace('p');
  process.stdout.write(
    `KAFKA_BROKERS=${c.brokers}\nSCHEMA_REGISTRY_URL=${c.registryUrl}\n` +
      `# brokers: ${c.nodes.map((n) => `${n.ns.name} (pid ${n.pid()})`).join(', ')}\n` +
      `# registry: ${c.registry.ns.name} (pid ${c.registry.pid()}); a spare namespace: ${p.name} (${p.ip})\n` +
      `# run a processor there: ip netns exec ${p.name} env KAFKA_BROKERS=… passk process\n` +
      `# logs: ${join(c.dir, 'logs')}; Ctrl-C tears everything down\n`,
  );
  await new Promise(() => {});
}
