import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { parseDocument as ParseDocument } from 'yaml';
import { z } from 'zod';

/**
 * The YAML parser, loaded the first time a config file needs it (a YAML file, or the line of a JSON syntax error):
 * most commands read no config file, and loading it cost every start about 40 ms of CPU (docs/performance.md, "CLI
 * start-up"). Its CommonJS build, which is also what `import 'yaml'` resolves to under Node.
 */
const parseDocument: typeof ParseDocument = (...args) =>
  (createRequire(import.meta.url)('yaml') as { parseDocument: typeof ParseDocument }).parseDocument(...args);

const compiles = (source: string): boolean => {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
};

/**
 * Configuration, parsed once. Precedence: command-line flags, then environment, then
 * `passk.config.json` (or `.yaml` / `.yml`) in the working directory (or `--config FILE` / `PASSK_CONFIG`), then defaults.
 */
export const PasskConfig = z
  .object({
    /** Which event log and store to use. @default 'embedded' */
    backend: z.enum(['embedded', 'kafka']).default('embedded'),
    /** Embedded data directory (event log and chDB store). @default './.passk' */
    dataDir: z.string().min(1).default('./.passk'),
    kafka: z
      .object({
        brokers: z.array(z.string().min(1)).min(1),
        schemaRegistryUrl: z.url(),
        clientId: z.string().default('passk'),
        /** Partitions for topics passk creates. @default 4 */
        partitions: z.number().int().positive().default(4),
        replicationFactor: z.number().int().positive().default(1),
        /** Deadline of one schema-registry request, ms; retried 3 times with backoff (env SCHEMA_REGISTRY_TIMEOUT_MS). @default 10000 */
        registryTimeoutMs: z.number().int().positive().optional(),
        /** Deadline of a TCP connect to a broker, ms (env KAFKA_CONNECTION_TIMEOUT_MS). @default 3000 */
        connectionTimeoutMs: z.number().int().positive().default(3_000),
        /**
         * Deadline of one request to a broker (produce, fetch offsets, admin), ms; then it is retried
         * (env KAFKA_REQUEST_TIMEOUT_MS). @default 30000, the Java client's request.timeout.ms
         */
        requestTimeoutMs: z.number().int().positive().default(30_000),
        /** Prefix of every topic and consumer group, so several passk installs share one cluster (env PASSK_KAFKA_NAMESPACE). */
        namespace: z
          .string()
          .regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only')
          .optional(),
      })
      .optional(),
    clickhouse: z
      .object({
        /** A ClickHouse server; absent = embedded chDB in `dataDir`. */
        url: z.url().optional(),
        username: z.string().default('default'),
        password: z.string().default(''),
        database: z.string().default('passk'),
        /** Deadline of one request to the ClickHouse server, ms (env CLICKHOUSE_REQUEST_TIMEOUT_MS). @default 60000 */
        requestTimeoutMs: z.number().int().positive().default(60_000),
      })
      .default({ username: 'default', password: '', database: 'passk', requestTimeoutMs: 60_000 }),
    /**
     * Deadlines of the HTTP servers (`passk ingest`, `passk serve`, `passk demo`), so a slow or silent client
     * cannot hold a connection forever: the request's headers, the whole request, and an idle kept-alive
     * connection between requests. Env PASSK_HTTP_HEADERS_TIMEOUT_MS, PASSK_HTTP_REQUEST_TIMEOUT_MS,
     * PASSK_HTTP_KEEP_ALIVE_TIMEOUT_MS.
     */
    http: z
      .object({
        /** @default 10000 (Node's 60000 is long for a small request's headers) */
        headersTimeoutMs: z.number().int().positive().default(10_000),
        /** @default 60000 (Node's 300000): a large ingest batch on a slow link still fits */
        requestTimeoutMs: z.number().int().positive().default(60_000),
        /** @default 5000 (Node's): behind a load balancer, set it above the balancer's idle timeout */
        keepAliveTimeoutMs: z.number().int().positive().default(5_000),
      })
      .default({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000 }),
    /**
     * How the OTLP receiver assembles spans into traces (docs/ingest.md): the byte bound on held spans, how long spans
     * wait for a root that never comes, and how long a recorded trace takes late spans as a new revision. Env
     * PASSK_OTLP_MAX_HELD_BYTES, PASSK_OTLP_ROOT_WAIT_MS, PASSK_OTLP_LATE_WINDOW_MS.
     */
    otlp: z
      .object({
        /** @default 67108864 (64 MiB) */
        maxHeldBytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024 * 1024),
        /** @default 30000 */
        rootWaitMs: z.number().int().nonnegative().default(30_000),
        /** @default 60000 */
        lateWindowMs: z.number().int().nonnegative().default(60_000),
      })
      .default({ maxHeldBytes: 64 * 1024 * 1024, rootWaitMs: 30_000, lateWindowMs: 60_000 }),
    /** Largest event accepted at publish, in bytes; larger ones are refused, never truncated. @default 1000000 */
    maxEventBytes: z.number().int().positive().default(1_000_000),
    /**
     * How long the processors gather a batch before making it durable (store, changelog, commit): the
     * floor of freshness, and the trade against throughput (docs/performance.md). @default 500
     */
    batchWindowMs: z.number().int().nonnegative().default(500),
    /**
     * The gates snapshot each owned partition of passk.decisions (its book and closed runs, passk.rowstate) once this
     * many of its records were folded since the last, and at a clean stop: a restore reads the partition from the
     * latest snapshot's offset on (docs/reliability.md). @default 20000
     */
    gateSnapshotEvery: z.number().int().positive().default(20_000),
    /**
     * The gates' horizon, in days of event time: decided comparison ids, verdict ids, alerts and adaptive runs older
     * than this (against the latest decision event), and closed runs older than the newest closed run by this, are
     * dropped from the books, their snapshots and memory (docs/processors.md). 0 keeps them for ever. Off by
     * default: on, a version whose runs all closed more than this before the newest run (another tool's results
     * imported with their own dates, a baseline not run since) completes only by a published dataset, so a gate on
     * it waits for ever (docs/reliability.md, "Why the horizon is off by default"). @default 0
     */
    gateHorizonDays: z.number().nonnegative().default(0),
    /**
     * The gates' ids horizon, in days, where they keep decided ids in memory (Kafka: no read of passk.decisions by
     * key; the embedded log looks them up instead, and a `gateHorizonDays` covers them): a decided comparison's id
     * and its verdict's id leave the books once a comparison was declared this long after the verdict, on the
     * declarations' own event time (docs/processors.md, "The ids horizon"). Then that comparison declared again
     * decides again, and a later verdict on its candidate is not flagged `repeated_verdict`. Nothing else is dropped:
     * closed runs, alerts and open comparisons stay, so a gate on an old imported baseline still decides. 0 keeps
     * them for ever. @default 7
     */
    gateIdHorizonDays: z.number().nonnegative().default(7),
    /**
     * Eviction of the gates' row tables (docs/processors.md, "Evicting versions from the row tables"), in days of
     * event time: a version no open comparison names and no production window pins leaves memory once a decided
     * comparison named it, or once its newest row state is this much older than the newest of any version; it is
     * read again from passk.rowstate before a decision needs it. 0: every version stays loaded. @default 7
     */
    gateEvictIdleDays: z.number().nonnegative().default(7),
    /**
     * The LLM judge of `passk run --grader judge`: any OpenAI-compatible endpoint. Every field is optional
     * here (most commands never call a judge); the judge grader refuses to start without `url` and `model`.
     */
    judge: z
      .object({
        /** API root, e.g. `http://localhost:8000/v1`; the judge POSTs to `<url>/chat/completions`. */
        url: z.url().optional(),
        model: z.string().min(1).optional(),
        /** Sent as a bearer token. Env `PASSK_JUDGE_API_KEY` or the config file; never a flag (it would show in `ps`). */
        apiKey: z.string().min(1).optional(),
        /** Time limit per judge call. @default 60000 */
        timeoutMs: z.number().int().positive().optional(),
      })
      .default({}),
    /** The dashboard's token (`passk serve`, `passk demo`): `--token`, env `PASSK_DASHBOARD_TOKEN` or the config file. */
    dashboard: z.object({ token: z.string().min(1).optional() }).default({}),
    /** The ingest API's write token (`passk ingest`, `passk serve --ingest-token`): env `PASSK_INGEST_TOKEN` or the config file. */
    ingest: z.object({ token: z.string().min(1).optional() }).default({}),
    /**
     * Extra redaction patterns, name → regular expression, applied after the default redactors wherever production
     * text comes in (`passk sample`, `passk ingest`, `passk serve`, `passk review --confirm`). Config file only.
     */
    redact: z
      .record(
        z.string().regex(/^[A-Za-z][\w-]*$/, 'a redactor name: letters, digits, _ and -'),
        z.string().min(1).refine(compiles, { message: 'not a valid regular expression' }),
      )
      .optional(),
  })
  .superRefine((c, ctx) => {
    if (c.backend === 'kafka' && !c.kafka)
      ctx.addIssue({
        code: 'custom',
        path: ['kafka'],
        message: 'PASSK_BACKEND=kafka needs KAFKA_BROKERS and SCHEMA_REGISTRY_URL',
      });
  });
export type PasskConfig = z.infer<typeof PasskConfig>;

type Flags = Partial<{
  backend: string;
  dataDir: string;
  config: string;
  judgeUrl: string;
  judgeModel: string;
  token: string;
}>;
type Json = Record<string, unknown>;

/** The settings the environment gives (exported for `passk config`, which shows where each value came from). */
export const fromEnv = (env: NodeJS.ProcessEnv): Json => {
  const out: Json = {};
  if (env.PASSK_BACKEND) out.backend = env.PASSK_BACKEND;
  if (env.PASSK_DATA_DIR) out.dataDir = env.PASSK_DATA_DIR;
  if (env.PASSK_MAX_EVENT_BYTES) out.maxEventBytes = Number(env.PASSK_MAX_EVENT_BYTES);
  if (env.PASSK_BATCH_WINDOW_MS) out.batchWindowMs = Number(env.PASSK_BATCH_WINDOW_MS);
  if (env.PASSK_GATE_SNAPSHOT_EVERY) out.gateSnapshotEvery = Number(env.PASSK_GATE_SNAPSHOT_EVERY);
  if (env.PASSK_GATE_HORIZON_DAYS) out.gateHorizonDays = Number(env.PASSK_GATE_HORIZON_DAYS);
  if (env.PASSK_GATE_ID_HORIZON_DAYS) out.gateIdHorizonDays = Number(env.PASSK_GATE_ID_HORIZON_DAYS);
  if (env.PASSK_GATE_EVICT_IDLE_DAYS) out.gateEvictIdleDays = Number(env.PASSK_GATE_EVICT_IDLE_DAYS);
  out.judge = {
    url: env.PASSK_JUDGE_URL || undefined,
    model: env.PASSK_JUDGE_MODEL || undefined,
    apiKey: env.PASSK_JUDGE_API_KEY || undefined,
    timeoutMs: env.PASSK_JUDGE_TIMEOUT_MS ? Number(env.PASSK_JUDGE_TIMEOUT_MS) : undefined,
  };
  if (env.PASSK_DASHBOARD_TOKEN) out.dashboard = { token: env.PASSK_DASHBOARD_TOKEN };
  if (env.PASSK_INGEST_TOKEN) out.ingest = { token: env.PASSK_INGEST_TOKEN };
  if (env.KAFKA_BROKERS || env.SCHEMA_REGISTRY_URL)
    out.kafka = {
      brokers: (env.KAFKA_BROKERS ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      schemaRegistryUrl: env.SCHEMA_REGISTRY_URL,
      ...(env.KAFKA_PARTITIONS ? { partitions: Number(env.KAFKA_PARTITIONS) } : {}),
      ...(env.PASSK_KAFKA_NAMESPACE ? { namespace: env.PASSK_KAFKA_NAMESPACE } : {}),
      ...(env.SCHEMA_REGISTRY_TIMEOUT_MS ? { registryTimeoutMs: Number(env.SCHEMA_REGISTRY_TIMEOUT_MS) } : {}),
      ...(env.KAFKA_CONNECTION_TIMEOUT_MS ? { connectionTimeoutMs: Number(env.KAFKA_CONNECTION_TIMEOUT_MS) } : {}),
      ...(env.KAFKA_REQUEST_TIMEOUT_MS ? { requestTimeoutMs: Number(env.KAFKA_REQUEST_TIMEOUT_MS) } : {}),
    };
  if (env.CLICKHOUSE_URL)
    out.clickhouse = {
      url: env.CLICKHOUSE_URL,
      ...(env.CLICKHOUSE_USER ? { username: env.CLICKHOUSE_USER } : {}),
      ...(env.CLICKHOUSE_PASSWORD ? { password: env.CLICKHOUSE_PASSWORD } : {}),
      ...(env.CLICKHOUSE_DATABASE ? { database: env.CLICKHOUSE_DATABASE } : {}),
      ...(env.CLICKHOUSE_REQUEST_TIMEOUT_MS ? { requestTimeoutMs: Number(env.CLICKHOUSE_REQUEST_TIMEOUT_MS) } : {}),
    };
  const http = {
    headersTimeoutMs: env.PASSK_HTTP_HEADERS_TIMEOUT_MS ? Number(env.PASSK_HTTP_HEADERS_TIMEOUT_MS) : undefined,
    requestTimeoutMs: env.PASSK_HTTP_REQUEST_TIMEOUT_MS ? Number(env.PASSK_HTTP_REQUEST_TIMEOUT_MS) : undefined,
    keepAliveTimeoutMs: env.PASSK_HTTP_KEEP_ALIVE_TIMEOUT_MS ? Number(env.PASSK_HTTP_KEEP_ALIVE_TIMEOUT_MS) : undefined,
  };
  if (Object.values(http).some((v) => v !== undefined)) out.http = http;
  const otlp = {
    maxHeldBytes: env.PASSK_OTLP_MAX_HELD_BYTES ? Number(env.PASSK_OTLP_MAX_HELD_BYTES) : undefined,
    rootWaitMs: env.PASSK_OTLP_ROOT_WAIT_MS ? Number(env.PASSK_OTLP_ROOT_WAIT_MS) : undefined,
    lateWindowMs: env.PASSK_OTLP_LATE_WINDOW_MS ? Number(env.PASSK_OTLP_LATE_WINDOW_MS) : undefined,
  };
  if (Object.values(otlp).some((v) => v !== undefined)) out.otlp = otlp;
  return out;
};

/** Config files looked for in the working directory when none is named, first found wins. */
export const CONFIG_FILES = ['passk.config.json', 'passk.config.yaml', 'passk.config.yml'] as const;

/** The config file in use: the one named (which must exist), else the first of CONFIG_FILES present, else null. */
export const configFileOf = (path: string | undefined, cwd: string): string | null => {
  if (path) {
    const file = resolve(cwd, path);
    if (!existsSync(file)) throw new ConfigError(`config file not found: ${file}`);
    return file;
  }
  return CONFIG_FILES.map((name) => resolve(cwd, name)).find((file) => existsSync(file)) ?? null;
};

/** Line and column of a character offset, for parse errors that give only the offset. */
const lineColOf = (text: string, offset: number): string => {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
};

/** The settings of the config file (JSON, or YAML for .yaml/.yml); a parse error names the file and the line. */
export const fromFile = (path: string | undefined, cwd: string): Json => {
  const file = configFileOf(path, cwd);
  if (!file) return {};
  const text = readFileSync(file, 'utf8');
  if (/\.ya?ml$/i.test(file)) {
    const doc = parseDocument(text, { prettyErrors: false });
    const error = doc.errors[0];
    if (error) throw new ConfigError(`${file}: not valid YAML at ${lineColOf(text, error.pos[0])}: ${error.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return {};
    if (typeof value !== 'object' || Array.isArray(value))
      throw new ConfigError(`${file}: the configuration must be a mapping of settings`);
    return value as Json;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new ConfigError(`${file}: the configuration must be a JSON object`);
    return value as Json;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    // JSON.parse's message gives no line; the YAML parser in JSON mode finds where the text goes wrong
    const error = parseDocument(text, { schema: 'json', prettyErrors: false }).errors[0];
    throw new ConfigError(
      `${file}: not valid JSON${error ? ` at ${lineColOf(text, error.pos[0])}` : ''} (${(e as Error).message})`,
    );
  }
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const merge = (...layers: Json[]): Json => {
  const out: Json = {};
  for (const layer of layers)
    for (const [k, v] of Object.entries(layer)) {
      if (v === undefined) continue;
      const prev = out[k];
      out[k] =
        prev && typeof prev === 'object' && !Array.isArray(prev) && v && typeof v === 'object' && !Array.isArray(v)
          ? merge(prev as Json, v as Json)
          : v;
    }
  return out;
};

export const loadConfig = (
  flags: Flags = {},
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): PasskConfig => {
  const file = fromFile(flags.config ?? env.PASSK_CONFIG, cwd);
  const fromFlags: Json = {
    backend: flags.backend,
    dataDir: flags.dataDir,
    judge: { url: flags.judgeUrl, model: flags.judgeModel },
    dashboard: { token: flags.token },
  };
  const result = PasskConfig.safeParse(merge(file, fromEnv(env), fromFlags));
  if (!result.success)
    throw new ConfigError(
      'invalid configuration: ' +
        result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
    );
  return { ...result.data, dataDir: resolve(cwd, result.data.dataDir) };
};

type Source = 'flag' | 'env' | 'file' | 'default';
type Setting = { key: string; value: unknown; source: Source };

/** Values never printed as they are. */
const SECRET = new Set(['clickhouse.password', 'judge.apiKey', 'dashboard.token', 'ingest.token']);

const leaves = (o: unknown, prefix = ''): [string, unknown][] =>
  o && typeof o === 'object' && !Array.isArray(o)
    ? Object.entries(o).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k))
    : [[prefix, o]];

const has = (layer: Record<string, unknown>, key: string): boolean => {
  let cur: unknown = layer;
  for (const part of key.split('.')) {
    if (!cur || typeof cur !== 'object' || !(part in cur)) return false;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur !== undefined;
};

/**
 * The effective configuration (`passk config`), one line per setting, with the layer it came from: flags win over the
 * environment, the environment over the config file, the file over the defaults (the order `loadConfig` merges them in).
 */
export const effectiveConfig = (
  flags: { config?: string; backend?: string; dataDir?: string },
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
) => {
  const config = loadConfig(flags, env, cwd);
  const file = fromFile(flags.config ?? env.PASSK_CONFIG, cwd);
  const envLayer = fromEnv(env);
  const flagLayer = { backend: flags.backend, dataDir: flags.dataDir };
  const settings: Setting[] = leaves(config).map(([key, value]) => ({
    key,
    value: SECRET.has(key) && value ? '***' : value,
    source: has(flagLayer, key) ? 'flag' : has(envLayer, key) ? 'env' : has(file, key) ? 'file' : 'default',
  }));
  return { file: configFileOf(flags.config ?? env.PASSK_CONFIG, cwd), settings };
};
