import { z } from 'zod';
import {
  attemptCounter,
  contentHash,
  derivedRunId,
  type FileEntry,
  fileRun,
  type ImportOptions,
  type ParsedFile,
  parsedFile,
  parseShape,
  parseTime,
} from './common.ts';

const Result = z.looseObject({
  testIdx: z.number().int().nonnegative(),
  /** A column of promptfoo's table: one (prompt, provider) pair. */
  promptIdx: z.number().int().nonnegative().optional(),
  promptId: z.string().optional(),
  provider: z
    .union([z.looseObject({ id: z.string().optional(), label: z.string().optional() }), z.string()])
    .optional(),
  success: z.boolean(),
  score: z.number().nullable().optional(),
  latencyMs: z.number().nullable().optional(),
  cost: z.number().nullable().optional(),
  error: z.string().nullable().optional(),
  /** 0 none, 1 an assertion failed, 2 an error (the provider or the harness failed). */
  failureReason: z.number().optional(),
  prompt: z.looseObject({ raw: z.string().optional(), label: z.string().optional() }).optional(),
  response: z
    .looseObject({
      output: z.unknown().optional(),
      tokenUsage: z.looseObject({ prompt: z.number().optional(), completion: z.number().optional() }).optional(),
    })
    .nullable()
    .optional(),
  testCase: z
    .looseObject({
      description: z.string().optional(),
      vars: z.record(z.string(), z.unknown()).optional(),
      assert: z.array(z.looseObject({ type: z.string(), value: z.unknown().optional() })).optional(),
    })
    .optional(),
  vars: z.record(z.string(), z.unknown()).optional(),
});
export const PromptfooFile = z.looseObject({
  evalId: z.string().optional(),
  results: z.looseObject({
    version: z.number().optional(),
    timestamp: z.string().optional(),
    results: z.array(Result),
  }),
  config: z
    .looseObject({
      description: z.string().optional(),
      /** `evaluateOptions.repeat` when the config sets it (`--repeat` on the command line is not written here). */
      evaluateOptions: z.unknown().optional(),
    })
    .optional(),
  metadata: z.looseObject({ promptfooVersion: z.string().optional() }).optional(),
});

/**
 * The repeats of each test a promptfoo file declares: `config.evaluateOptions.repeat` when the config set it.
 * promptfoo does not write a `--repeat` given on the command line into its output, so such a file declares none.
 */
export const promptfooDeclaredK = (config: z.output<typeof PromptfooFile>['config']): number | undefined => {
  const options = config?.evaluateOptions;
  const repeat = typeof options === 'object' && options !== null ? (options as { repeat?: unknown }).repeat : undefined;
  return typeof repeat === 'number' && Number.isInteger(repeat) && repeat > 0 ? repeat : undefined;
};

export const looksLikePromptfoo = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  'results' in v &&
  Array.isArray((v as { results?: { results?: unknown } }).results?.results);

export type Result = z.output<typeof Result>;

const providerName = (r: Result): string =>
  typeof r.provider === 'string' ? r.provider : (r.provider?.label ?? r.provider?.id ?? 'provider');

/** A test case is the row; its identity is its content (vars and assertions), named by its description. */
const rowKeyOf = (r: Result): string =>
  contentHash({ vars: r.testCase?.vars ?? r.vars ?? {}, assert: r.testCase?.assert ?? [] });

const text = (v: unknown): string | undefined =>
  v == null ? undefined : typeof v === 'string' ? v : JSON.stringify(v);

/**
 * promptfoo `-o results.json`. A row is one test case (its description, or a hash of its vars and
 * assertions when descriptions are missing or shared by different tests); the agent is the provider label
 * (plus `#prompt<i>` when the file has several prompts); repeats of a test (`--repeat N`) are attempts,
 * numbered in `testIdx` order. passed ← `success`; a result with `failureReason` 2 (an error, which promptfoo
 * counts apart from failures) is ungraded. suite ← `--suite`, else the config description, else `promptfoo`.
 */
export const parsePromptfoo = (text_: string, value: unknown, file: string, opts: ImportOptions = {}): ParsedFile => {
  const doc = parseShape(PromptfooFile, value, file, 'promptfoo results');
  const results = doc.results.results;
  const at = parseTime(doc.results.timestamp);
  const prompts = [...new Set(results.map(promptOf))];

  // Row ids: the description when it names exactly one test, else description#hash.
  const keysByName = new Map<string, Set<string>>();
  for (const r of results) {
    const name = r.testCase?.description ?? '';
    keysByName.set(name, (keysByName.get(name) ?? new Set()).add(rowKeyOf(r)));
  }
  const rowIdOf = (r: Result): string => {
    const name = r.testCase?.description;
    const key = rowKeyOf(r);
    return name && keysByName.get(name)!.size === 1 ? name : `${name ?? 'test'}#${key}`;
  };
  const run = fileRun(opts, {
    suite: doc.config?.description?.slice(0, 200) ?? 'promptfoo',
    datasetVersion: `promptfoo-${contentHash([...new Set(results.map(rowKeyOf))].sort())}`,
    runId: doc.evalId ?? derivedRunId('promptfoo', text_, at),
    grader: {
      kind: 'external',
      id: 'promptfoo',
      ...(doc.metadata?.promptfooVersion ? { version: doc.metadata.promptfooVersion } : {}),
    },
  });

  const ordered = [...results].sort((a, b) => a.testIdx - b.testIdx);
  const nextAttempt = attemptCounter();
  return parsedFile(
    'promptfoo',
    run,
    ordered.map((r) => {
      const version = promptfooVersion(r, prompts.length, prompts.indexOf(promptOf(r)), opts);
      const row = rowIdOf(r);
      return promptfooEntry(r, version, row, nextAttempt(version, row), at);
    }),
  );
};

export { Result as PromptfooResultSchema, providerName, rowKeyOf };
export const promptOf = (r: Result): string => r.promptId ?? r.prompt?.raw ?? '';

/** The agent version of a result: its provider, plus `#prompt<i>` when the file has several prompts. */
export const promptfooVersion = (r: Result, prompts: number, promptIndex: number, opts: ImportOptions): string =>
  promptfooVersionOf(providerName(r), prompts, promptIndex, opts);
/** `promptfooVersion` from the provider's name. */
export const promptfooVersionOf = (provider: string, prompts: number, promptIndex: number, opts: ImportOptions) =>
  opts.agentVersion ?? (prompts > 1 ? `${provider}#prompt${promptIndex}` : provider);

/** One promptfoo result as a file entry (see `parsePromptfoo`), its row and attempt given. */
export const promptfooEntry = (
  r: Result,
  version: string,
  row: string,
  attempt: number,
  at: number | undefined,
): FileEntry => {
  const errored = r.failureReason === 2;
  const equals = r.testCase?.assert?.filter((a) => a.type === 'equals') ?? [];
  const usage = r.response?.tokenUsage;
  return {
    row,
    attempt,
    agent: { version, ...(typeof r.provider === 'object' && r.provider.id ? { id: r.provider.id } : {}) },
    passed: errored ? null : r.success,
    score: r.score,
    ...(errored ? { errorKind: 'provider_error' } : {}),
    input: r.prompt?.raw || undefined,
    output: text(r.response?.output),
    expected: equals.length === 1 ? text(equals[0]!.value) : undefined,
    costUsd: r.cost,
    latencyMs: r.latencyMs,
    tokens:
      usage && (usage.prompt || usage.completion)
        ? { input: usage.prompt ?? 0, output: usage.completion ?? 0 }
        : undefined,
    at,
  };
};
