import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { InputError } from '../../schemas/errors.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { trialEventId } from '../sdk/ids.ts';
import type { TrialInput } from '../sdk/inputs.ts';
import { KEY_SEP } from '../../schemas/topics.ts';

/** What the user may set for every format; each importer documents its defaults. */
export interface ImportOptions {
  readonly suite?: string;
  readonly agentVersion?: string;
  readonly datasetId?: string;
  readonly datasetVersion?: string;
  readonly runId?: string;
  /** Inspect: which scorer decides pass/fail. @default the first scorer of the log */
  readonly scorer?: string;
  /**
   * Inspect: a score whose numeric value (C = 1, P = 0.5, I = N = 0, or the number itself) is at least this passes.
   * @default 1, Inspect's own rule (`value_to_float(...) >= 1`): partial credit fails.
   */
  readonly passThreshold?: number;
  /** Told the bytes each read of a file takes from disk, over every pass (the progress of an import's first passes). */
  readonly onRead?: (bytes: number) => void;
}

/** A trial ready to publish: validated later by the recorder; its id is already fixed. */
export type ImportedTrial = TrialInput & { event_id: string };

export interface ParsedFile {
  readonly format: string;
  readonly trials: ImportedTrial[];
}

/** A trial's outcome from a reward in [0, 1]: the benchmarks' own rule, reward within 1e-6 of 1. */
export const passedFromReward = (reward: number): boolean => Math.abs(reward - 1) < 1e-6;

export const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** A stable short hash of any JSON value (keys sorted), for content-addressed dataset versions. */
export const contentHash = (value: unknown): string => sha256(canonicalJson(value)).slice(0, 12);

/** JSON with object keys sorted: what `contentHash` hashes. */
export const canonicalJson = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonicalJson).join(',')}]`
    : v !== null && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : (JSON.stringify(v) ?? 'null');

/**
 * A run id for a file that has none: `<tool>-<ULID>`, whose time part is the file's own timestamp
 * (0 when it has none) and whose random part is the hash of the file's bytes. Re-importing the same
 * bytes gives the same run id, hence the same event ids.
 */
export const derivedRunId = (tool: string, bytes: string, atMs: number | undefined): string =>
  derivedRunIdOfHash(tool, sha256(bytes), atMs);

/** `derivedRunId` from the sha256 (hex) of the file's text, for a file read as a stream. */
export const derivedRunIdOfHash = (tool: string, sha256Hex: string, atMs: number | undefined): string =>
  `${tool}-${deterministicEventId(atMs ?? 0, 'import', sha256Hex)}`;

/** Epoch ms of an ISO time; a time without an offset is read as UTC (the tools write UTC). */
export const parseTime = (iso: unknown): number | undefined => {
  if (typeof iso !== 'string') return undefined;
  const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`;
  const ms = Date.parse(withZone);
  return Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : undefined;
};

const MAX_TEXT = 8_000;
/** Long texts are cut, so one trial stays far below the largest event the log accepts. */
export const clip = (s: string | undefined | null): string | undefined =>
  s == null ? undefined : s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT)}…[${s.length - MAX_TEXT} more characters]`;

export const baseName = (file: string): string => (file.split(/[\\/]/).pop() ?? file).replace(/\.[^.]+$/, '');

/**
 * Python's `json.dumps` writes a float NaN or infinity as the bare tokens `NaN`, `Infinity` and `-Infinity`, which
 * JSON does not have (Inspect writes an unscored epoch's value as `NaN`). Outside strings they become `null`:
 * "no value", which each importer reads as ungraded. Strings are left exactly as they are.
 */
export const pythonJsonToJson = (text: string): string => {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x4e /* N */ || c === 0x49 /* I */ || c === 0x2d /* - */) {
      const token = /^(?:NaN|-?Infinity)/.exec(text.slice(i, i + 9))?.[0];
      if (token) {
        out += `${text.slice(from, i)}null`;
        i += token.length - 1;
        from = i + 1;
      }
    }
  }
  return from === 0 ? text : out + text.slice(from);
};

/** Parses JSON (Python's NaN and infinities read as null) or says where it is broken. */
export const parseJson = (text: string, file: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (e) {
    try {
      return JSON.parse(pythonJsonToJson(text));
    } catch {
      throw new InputError(`not valid JSON (${(e as Error).message})`, { file });
    }
  }
};

/** Checks a file's shape with a zod schema; the error names the first failing field path. */
export const parseShape = <S extends z.ZodType>(schema: S, value: unknown, file: string, what: string): z.output<S> => {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  throw new InputError(`not a ${what} file: ${issue.message}`, { file, field: field || '(root)' });
};

/** Fixes the event id of a trial from its identity (see `trialEventId`). */
export const withId = (t: TrialInput): ImportedTrial => ({
  ...t,
  event_id: trialEventId({ ...t, agent: { version: t.agent.version }, row_id: String(t.row_id) }),
});

/** Attempt numbers by order of appearance within each (agent, row), for tools that do not number repeats. */
export const attemptCounter = () => {
  const seen = new Map<string, number>();
  return (agent: string, row: string): number => {
    const key = `${agent}${KEY_SEP}${row}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return n;
  };
};

/** What a results file says once for all its trials; `fileRun` applies the user's overrides. */
export interface FileRun {
  readonly suite: string;
  readonly datasetVersion: string;
  readonly runId: string;
  readonly grader: TrialInput['grader'];
  readonly datasetId?: string;
}

/** A file's run from the importer's defaults, each overridden by its option (`--suite`, `--dataset-version`, …). */
export const fileRun = (opts: ImportOptions, defaults: Omit<FileRun, 'datasetId'>): FileRun => ({
  suite: opts.suite ?? defaults.suite,
  datasetVersion: opts.datasetVersion ?? defaults.datasetVersion,
  runId: opts.runId ?? defaults.runId,
  grader: defaults.grader,
  ...(opts.datasetId ? { datasetId: opts.datasetId } : {}),
});

/** One result of a file in the tool's terms, before the mapping every importer shares (`fileTrial`). */
export interface FileEntry {
  readonly row: string;
  readonly attempt: number;
  readonly agent: TrialInput['agent'];
  /** The tool's verdict; null when the tool could not carry the trial out (ungraded, a test-environment failure). */
  readonly passed: boolean | null;
  /** Ignored when ungraded. */
  readonly score?: number | null;
  readonly errorKind?: string | undefined;
  /** Texts are clipped; undefined or null leaves the field out. */
  readonly input?: string | null | undefined;
  readonly output?: string | null | undefined;
  readonly expected?: string | null | undefined;
  readonly actions?: TrialInput['actions'];
  readonly costUsd?: number | null | undefined;
  readonly tokens?: { input: number; output: number } | undefined;
  readonly latencyMs?: number | null | undefined;
  readonly at?: number | undefined;
}

/**
 * The trial of one file entry, with its event id: the run's identity, the verdict (an ungraded entry gets no
 * score and `failure_category: test_environment`, never counted as the agent's failure), and the optional
 * texts, actions, cost, tokens, latency and time when the tool recorded them.
 */
export const fileTrial = (run: FileRun, e: FileEntry): ImportedTrial => {
  const ungraded = e.passed === null;
  const input = clip(e.input);
  const output = clip(e.output);
  const expected = clip(e.expected);
  return withId({
    suite: run.suite,
    ...(run.datasetId ? { dataset_id: run.datasetId } : {}),
    dataset_version: run.datasetVersion,
    row_id: e.row,
    run_id: run.runId,
    attempt: e.attempt,
    agent: e.agent,
    passed: e.passed,
    score: ungraded ? null : (e.score ?? null),
    grader: run.grader,
    ...(e.errorKind ? { error_kind: e.errorKind } : {}),
    ...(ungraded ? { failure_category: 'test_environment' as const } : {}),
    ...(input !== undefined ? { input } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(expected !== undefined ? { expected } : {}),
    ...(e.actions?.length ? { actions: e.actions } : {}),
    ...(typeof e.costUsd === 'number' ? { cost_usd: e.costUsd } : {}),
    ...(e.tokens ? { tokens: e.tokens } : {}),
    ...(typeof e.latencyMs === 'number' ? { latency_ms: e.latencyMs } : {}),
    ...(e.at !== undefined ? { occurred_at: e.at } : {}),
  });
};

/** A parsed file: every entry mapped by `fileTrial`. */
export const parsedFile = (format: string, run: FileRun, entries: readonly FileEntry[]): ParsedFile => ({
  format,
  trials: entries.map((e) => fileTrial(run, e)),
});
