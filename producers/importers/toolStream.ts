import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import {
  attemptCounter,
  baseName,
  canonicalJson,
  contentHash,
  derivedRunIdOfHash,
  fileRun,
  fileTrial,
  type ImportedTrial,
  type ImportOptions,
  parseJson,
  parseShape,
  parseTime,
} from './common.ts';
import type { Format, ToolFormat } from './detect.ts';
import { JSON_FORMAT_LOOKS } from './detect.ts';
import {
  inspectContext,
  inspectDeclaredK,
  InspectFile,
  InspectSampleSchema,
  inspectText,
  inspectTrial,
} from './inspect.ts';
import { scanJson } from './jsonStream.ts';
import {
  PromptfooFile,
  promptfooDeclaredK,
  PromptfooResultSchema,
  promptfooEntry,
  promptfooVersion,
  promptfooVersionOf,
  promptOf,
  providerName,
  type Result as PromptfooResult,
  rowKeyOf,
} from './promptfoo.ts';
import { maxDocumentBytes, readHead } from './readResults.ts';
import { tau2Agent, tau2DeclaredK, Tau2File, Tau2SimulationSchema, tau2Entry } from './tau2Bench.ts';
import { domainOfEntry, tauBenchDeclaredK, TauBenchEntrySchema, tauBenchEntry, TauBenchFile } from './tauBench.ts';
import { isZip, openZip, type ZipEntry, ZipTooLarge } from './zip.ts';

/**
 * Other tools' results files, streamed: each is one JSON document (or an Inspect `.eval` zip of them) whose mapping
 * needs all of it, so it is read twice. The first pass (at open) keeps what needs the whole document: the document
 * without its large arrays, a hash of its text, and per task or sample a small key (τ-bench: each task's first
 * definition; promptfoo: each result's test index and row key; Inspect: each sample's id and target, and for `.eval`
 * its entry's sort key). `entries()` then reads it again and maps one entry at a time, to the same trials the
 * whole-document parsers (`parseResultsFile`) make, in the file's order (promptfoo's attempts are numbered in
 * `testIdx` order all the same).
 */

/** A trial of a tool's file, with its entry's place: its JSON path (`simulations[3]`), or an `.eval` sample's name. */
export interface ToolEntry {
  readonly t: ImportedTrial;
  readonly index: number;
  readonly path: string;
}
export interface ToolSource {
  readonly format: ToolFormat;
  /**
   * The attempts per row the file declares its run gave (Inspect's `epochs`, τ²-bench's `num_trials`, τ-bench's
   * trials, promptfoo's `evaluateOptions.repeat`): the import's RunFinished `k`, and the report's default K (an
   * attempt missing from the file does not lower it). Undefined when the file does not say.
   */
  readonly declaredK?: number;
  entries(): AsyncGenerator<ToolEntry>;
}

/** The file is not another tool's JSON document (not JSON, or of no known shape): `report` then reads it as flat. */
export class NotAToolFile extends InputError {}

/** Arrays read one element at a time; every other part of a document is kept (it is small in every tool's file). */
const STREAMED = new Set([
  '',
  'simulations',
  'tasks',
  'results.results',
  'results.table.body',
  'samples',
  'reductions',
]);
/** Which array holds a format's trials. */
const MAIN: Record<ToolFormat, string> = {
  'tau-bench': '',
  'tau2-bench': 'simulations',
  promptfoo: 'results.results',
  inspect: 'samples',
};
const WHAT: Record<ToolFormat, string> = {
  'tau-bench': 'τ-bench results',
  'tau2-bench': 'τ²-bench results',
  promptfoo: 'promptfoo results',
  inspect: 'Inspect eval log',
};

const fieldOf = (prefix: string, path: readonly PropertyKey[]): string =>
  (
    prefix +
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('')
      .replace(/^\./, prefix === '' ? '' : '.')
  ).replace(/^\./, '');

/** An element checked with its schema; a failure names the element's JSON path and field. */
const checked = <S extends z.ZodType>(
  schema: S,
  value: unknown,
  file: string,
  array: string,
  index: number,
  what: string,
): z.output<S> => {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new InputError(`not a ${what} file: ${issue.message}`, {
    file,
    field: fieldOf(`${array}[${index}]`, issue.path),
  });
};

/** sha256 over a JSON array written piece by piece: `contentHash` of the array, without building it. */
const arrayHash = (items: Iterable<string>): string => {
  const h = createHash('sha256').update('[');
  let first = true;
  for (const s of items) {
    h.update(first ? s : `,${s}`);
    first = false;
  }
  return h.update(']').digest('hex').slice(0, 12);
};

const TaskId = z.looseObject({ id: z.union([z.string(), z.number()]) });

/** What the first pass keeps of each array, per format: never the entries themselves. */
const createAccumulators = (file: string) => {
  const errors = new Map<string, InputError>();
  const guard = (array: string, f: () => void): void => {
    if (errors.has(array)) return;
    try {
      f();
    } catch (e) {
      if (e instanceof InputError) errors.set(array, e);
      else throw e;
    }
  };
  const tau = {
    withTask: new Map<string, string>(),
    ids: new Set<string>(),
    domain: undefined as string | undefined,
    trials: new Set<number>(),
    everyTrial: true,
  };
  const tau2 = { taskIds: [] as string[] };
  const pf = {
    testIdx: [] as number[],
    rowKey: [] as number[],
    prompt: [] as number[],
    provider: [] as number[],
    description: [] as number[],
    providers: new Map<string, number>(),
    descriptions: new Map<string | undefined, number>(),
    rowKeys: new Map<string, number>(),
    prompts: new Map<string, number>(),
    keysByName: new Map<string, Set<string>>(),
  };
  const inspect = {
    rows: new Map<string, string | null>(),
    firstScoreName: undefined as string | undefined,
    scored: false,
  };

  const add = (array: string, index: number, value: unknown): void => {
    switch (array) {
      case '':
        return guard(array, () => {
          const e = checked(TauBenchEntrySchema, value, file, array, index, WHAT['tau-bench']);
          const id = String(e.task_id);
          tau.ids.add(id);
          if (typeof e.trial === 'number') tau.trials.add(e.trial);
          else tau.everyTrial = false;
          if (e.info?.task && !tau.withTask.has(id)) tau.withTask.set(id, canonicalJson(e.info.task));
          tau.domain ??= domainOfEntry(e);
        });
      case 'tasks':
        return guard(array, () => {
          const t = checked(TaskId, value, file, array, index, WHAT['tau2-bench']);
          tau2.taskIds.push(canonicalJson(t.id));
        });
      case 'simulations':
        return guard(array, () => void checked(Tau2SimulationSchema, value, file, array, index, WHAT['tau2-bench']));
      case 'results.results':
        return guard(array, () => {
          const r = checked(PromptfooResultSchema, value, file, array, index, WHAT.promptfoo);
          const key = rowKeyOf(r);
          const name = r.testCase?.description ?? '';
          pf.keysByName.set(name, (pf.keysByName.get(name) ?? new Set()).add(key));
          let k = pf.rowKeys.get(key);
          if (k === undefined) pf.rowKeys.set(key, (k = pf.rowKeys.size));
          // a prompt is told by its digest: the prompts' texts are not kept
          const p = createHash('sha1').update(promptOf(r)).digest('base64');
          let pi = pf.prompts.get(p);
          if (pi === undefined) pf.prompts.set(p, (pi = pf.prompts.size));
          const prov = providerName(r);
          let pv = pf.providers.get(prov);
          if (pv === undefined) pf.providers.set(prov, (pv = pf.providers.size));
          const desc = r.testCase?.description;
          let d = pf.descriptions.get(desc);
          if (d === undefined) pf.descriptions.set(desc, (d = pf.descriptions.size));
          pf.provider.push(pv);
          pf.description.push(d);
          pf.testIdx.push(r.testIdx);
          pf.rowKey.push(k);
          pf.prompt.push(pi);
        });
      case 'samples':
        return guard(array, () => {
          const s = checked(InspectSampleSchema, value, file, array, index, WHAT.inspect);
          addSample(String(s.id), inspectText(s.target) ?? null, s.scores ? Object.keys(s.scores) : undefined);
        });
      default:
        return;
    }
  };
  /** A sample's id, target and score names (undefined without scores). */
  const addSample = (id: string, target: string | null, scores: string[] | undefined): void => {
    inspect.rows.set(id, target);
    if (scores && !inspect.scored) {
      inspect.scored = true;
      inspect.firstScoreName = scores[0];
    }
  };
  return { add, addSample, errors, tau, tau2, pf, inspect };
};
type Accumulators = ReturnType<typeof createAccumulators>;

const rowsHash = (rows: Map<string, string | null>): string =>
  arrayHash(
    [...rows.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, target]) => `[${JSON.stringify(id)},${target === null ? 'null' : JSON.stringify(target)}]`),
  );

/** The promptfoo rows and attempts of a file's results (by index), as `parsePromptfoo` numbers them. */
const promptfooPlan = (acc: Accumulators, results: (i: number) => { version: string; row: string }) => {
  const n = acc.pf.testIdx.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => acc.pf.testIdx[a]! - acc.pf.testIdx[b]!);
  const nextAttempt = attemptCounter();
  const attempts = new Int32Array(n);
  for (const i of order) {
    const { version, row } = results(i);
    attempts[i] = nextAttempt(version, row);
  }
  return attempts;
};

/** Opens another tool's JSON document (not a zip): the first pass, at open; `entries()` is the mapping pass. */
const openJsonDocument = async (file: string, opts: ImportOptions, forced: ToolFormat | undefined) => {
  if (!forced) {
    const head = (await readHead(file, 4096)).toString('utf8').trimStart();
    if (!head.startsWith('{') && !head.startsWith('['))
      throw new NotAToolFile('not JSON, JSONL or CSV: pass --format', { file });
  }
  // Python's NaN and infinities are read as null by a filter over the text, which costs a pass over every character:
  // it runs only once a file fails to parse without it (as the whole-document reader tried JSON.parse first)
  let python = false;
  let acc = createAccumulators(file);
  let first = scanJson(file, STREAMED, { python, ...(opts.onRead ? { onRead: opts.onRead } : {}) });
  try {
    try {
      for await (const e of first.elements()) acc.add(e.array, e.index, e.value);
    } catch (e) {
      if (!(e instanceof InputError) || !e.message.includes('not valid JSON')) throw e;
      python = true;
      acc = createAccumulators(file);
      first = scanJson(file, STREAMED, { python, ...(opts.onRead ? { onRead: opts.onRead } : {}) });
      for await (const e of first.elements()) acc.add(e.array, e.index, e.value);
    }
  } catch (e) {
    if (!forced && e instanceof InputError && !(e instanceof NotAToolFile))
      throw new NotAToolFile(e.message.slice(new InputError('', e.where).message.length), e.where);
    throw e;
  }
  const { skeleton, counts, sha256 } = first.result();
  const format =
    forced ??
    JSON_FORMAT_LOOKS.find(([, looks]) => looks(skeleton))?.[0] ??
    (() => {
      throw new NotAToolFile(
        `unrecognized results file (expected one of tau-bench, tau2-bench, promptfoo, inspect, csv, jsonl): pass --format`,
        { file },
      );
    })();
  const main = MAIN[format];
  const what = WHAT[format];
  const error = (array: string) => acc.errors.get(array);

  const stream = async function* <T>(
    schema: z.ZodType<T>,
    map: (value: T, index: number) => ImportedTrial,
  ): AsyncGenerator<ToolEntry> {
    const again = scanJson(file, STREAMED, { python, ...(opts.onRead ? { onRead: opts.onRead } : {}) });
    let n = 0;
    for await (const e of again.elements()) {
      if (e.array !== main) continue;
      n++;
      const value = checked(schema, e.value, file, main, e.index, what);
      yield { t: map(value, e.index), index: e.index, path: `${main}[${e.index}]` };
    }
    if (n !== (counts.get(main) ?? 0))
      throw new InputError('changed while it was imported; rerun the import', { file });
  };

  switch (format) {
    case 'tau-bench': {
      parseShape(TauBenchFile, skeleton, file, what);
      const err = error('');
      if (err) throw err;
      const version = opts.agentVersion ?? baseName(file);
      const tasks: [string, string][] = [...acc.tau.withTask];
      for (const id of acc.tau.ids) if (!acc.tau.withTask.has(id)) tasks.push([id, 'null']);
      const run = fileRun(opts, {
        suite: acc.tau.domain ?? 'tau-bench',
        datasetVersion: `tau-bench-${arrayHash(
          tasks.sort(([a], [b]) => a.localeCompare(b)).map(([id, task]) => `[${JSON.stringify(id)},${task}]`),
        )}`,
        runId: derivedRunIdOfHash('tau-bench', sha256, undefined),
        grader: { kind: 'external', id: 'tau-bench' },
      });
      acc.tau.withTask.clear();
      const declaredK = tauBenchDeclaredK(acc.tau.trials, acc.tau.everyTrial);
      return {
        format,
        ...(declaredK === undefined ? {} : { declaredK }),
        entries: () => {
          const nextAttempt = attemptCounter();
          return stream(TauBenchEntrySchema, (e) => fileTrial(run, tauBenchEntry(e, version, nextAttempt)));
        },
      } satisfies ToolSource;
    }
    case 'tau2-bench': {
      const doc = parseShape(Tau2File, skeleton, file, what);
      const err = error('simulations') ?? error('tasks');
      if (err) throw err;
      const agent = tau2Agent(doc.info, opts);
      const commit = doc.info.git_commit?.slice(0, 7);
      const run = fileRun(opts, {
        suite: doc.info.environment_info.domain_name,
        datasetVersion: commit ? `tau2@${commit}` : `tau2-${arrayHash(acc.tau2.taskIds)}`,
        runId: derivedRunIdOfHash('tau2', sha256, parseTime(doc.timestamp)),
        grader: { kind: 'external', id: 'tau2-bench', ...(commit ? { version: commit } : {}) },
      });
      const declaredK = tau2DeclaredK(doc.info);
      return {
        format,
        ...(declaredK === undefined ? {} : { declaredK }),
        entries: () => {
          const nextAttempt = attemptCounter();
          return stream(Tau2SimulationSchema, (s) => fileTrial(run, tau2Entry(s, agent, nextAttempt)));
        },
      } satisfies ToolSource;
    }
    case 'promptfoo': {
      const doc = parseShape(PromptfooFile, skeleton, file, what);
      const err = error('results.results');
      if (err) throw err;
      const at = parseTime(doc.results.timestamp);
      const { keysByName, prompts } = acc.pf;
      const keys = [...acc.pf.rowKeys.keys()];
      const rowIdOf = (name: string | undefined, key: string): string =>
        name && keysByName.get(name)!.size === 1 ? name : `${name ?? 'test'}#${key}`;
      const run = fileRun(opts, {
        suite: doc.config?.description?.slice(0, 200) ?? 'promptfoo',
        datasetVersion: `promptfoo-${contentHash([...keys].sort())}`,
        runId: doc.evalId ?? derivedRunIdOfHash('promptfoo', sha256, at),
        grader: {
          kind: 'external',
          id: 'promptfoo',
          ...(doc.metadata?.promptfooVersion ? { version: doc.metadata.promptfooVersion } : {}),
        },
      });
      const identity = (r: PromptfooResult, i: number) => ({
        version: promptfooVersion(r, prompts.size, acc.pf.prompt[i]!, opts),
        row: rowIdOf(r.testCase?.description, keys[acc.pf.rowKey[i]!]!),
      });
      // attempts are numbered in testIdx order: what each result keeps of the first pass gives its row and agent
      const providers = [...acc.pf.providers.keys()];
      const descriptions = [...acc.pf.descriptions.keys()];
      const attempts = promptfooPlan(acc, (i) => ({
        version: promptfooVersionOf(providers[acc.pf.provider[i]!]!, prompts.size, acc.pf.prompt[i]!, opts),
        row: rowIdOf(descriptions[acc.pf.description[i]!], keys[acc.pf.rowKey[i]!]!),
      }));
      const declaredK = promptfooDeclaredK(doc.config);
      return {
        format,
        ...(declaredK === undefined ? {} : { declaredK }),
        entries: () =>
          stream(PromptfooResultSchema, (r, i) => {
            const { version, row } = identity(r, i);
            return fileTrial(run, promptfooEntry(r, version, row, attempts[i]!, at));
          }),
      } satisfies ToolSource;
    }
    case 'inspect': {
      const doc = parseShape(InspectFile, skeleton, file, what);
      const err = error('samples');
      if (err) throw err;
      if ((counts.get('samples') ?? 0) === 0)
        throw new InputError('the log has no samples (was it written with log_samples=False?)', {
          file,
          field: 'samples',
        });
      const ctx = inspectContext(doc.eval, acc.inspect.firstScoreName, rowsHash(acc.inspect.rows), file, opts);
      acc.inspect.rows.clear();
      const declaredK = inspectDeclaredK(doc);
      return {
        format,
        ...(declaredK === undefined ? {} : { declaredK }),
        entries: () => stream(InspectSampleSchema, (s, i) => inspectTrial(s, i, ctx, file, opts)),
      } satisfies ToolSource;
    }
  }
};

const MIB = 1024 * 1024;

/**
 * Opens an Inspect `.eval` log (a zip: `header.json`, or `_journal/start.json` while the eval runs, plus one
 * `samples/<id>_epoch_<n>.json` per sample): the central directory, the header, and each sample inflated one at a
 * time, in Inspect's order (epoch, then id). One entry may unpack to at most `maxEntryBytes` (1/16 of the heap).
 */
const openEval = async (file: string, opts: ImportOptions, maxEntryBytes: number): Promise<ToolSource> => {
  let zip: Awaited<ReturnType<typeof openZip>>;
  try {
    zip = await openZip(file, opts.onRead);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).syscall) throw unreadableFile(file, e, 'results file');
    throw new InputError(`not a readable Inspect .eval log: ${(e as Error).message}`, { file });
  }
  const readJson = async (entry: ZipEntry): Promise<Record<string, unknown>> => {
    let buf: Buffer;
    try {
      buf = await zip.read(entry, maxEntryBytes);
    } catch (e) {
      if (e instanceof ZipTooLarge)
        throw new InputError(
          `unpacks to ${(e.bytes / MIB).toFixed(1)} MiB, over the ${(maxEntryBytes / MIB).toFixed(1)} MiB one entry of ` +
            `an .eval log can be read in with this heap (1/16 of it; each sample is read whole): give Node more heap ` +
            `(NODE_OPTIONS=--max-old-space-size=MiB)`,
          { file: `${file}:${entry.name}` },
        );
      throw new InputError(`not a readable Inspect .eval log: ${(e as Error).message}`, { file });
    }
    const value = parseJson(buf.toString('utf8'), `${file}:${entry.name}`);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InputError('not a JSON object', { file: `${file}:${entry.name}` });
    return value as Record<string, unknown>;
  };
  try {
    const byName = new Map(zip.entries.map((e) => [e.name, e]));
    const header = byName.get('header.json') ?? byName.get('_journal/start.json');
    if (!header)
      throw new InputError('not an Inspect .eval log: no header.json or _journal/start.json in the zip', { file });
    const names = [...byName.keys()].filter((n) => /^samples\/.+\.json$/.test(n));
    // first pass: each sample's sort key, id and target; nothing else is kept
    const keys: {
      name: string;
      epoch: number;
      id: string;
      target: string | null;
      scores?: string[] | undefined;
      error?: InputError;
    }[] = [];
    for (const name of names) {
      const s = await readJson(byName.get(name)!);
      const r = InspectSampleSchema.safeParse(s);
      const issue = r.success ? undefined : r.error.issues[0]!;
      keys.push({
        name,
        epoch: Number(s.epoch ?? 0),
        id: String(s.id),
        target: r.success ? (inspectText(r.data.target) ?? null) : null,
        scores: r.success && r.data.scores ? Object.keys(r.data.scores).slice(0, 1) : undefined,
        ...(issue
          ? {
              error: new InputError(`not an Inspect eval log file: ${issue.message}`, {
                file: `${file}:${name}`,
                field: fieldOf('', issue.path) || '(root)',
              }),
            }
          : {}),
      });
    }
    keys.sort((a, b) =>
      a.epoch !== b.epoch ? a.epoch - b.epoch : a.id.localeCompare(b.id, undefined, { numeric: true }),
    );
    const head = await readJson(header);
    const doc = parseShape(InspectFile, { ...head, samples: [] }, file, WHAT.inspect);
    const bad = keys.find((k) => k.error);
    if (bad) throw bad.error!;
    if (keys.length === 0)
      throw new InputError('the log has no samples (was it written with log_samples=False?)', {
        file,
        field: 'samples',
      });
    const acc = createAccumulators(file);
    for (const k of keys) acc.addSample(k.id, k.target, k.scores);
    const ctx = inspectContext(doc.eval, acc.inspect.firstScoreName, rowsHash(acc.inspect.rows), file, opts);
    const order = keys.map((k) => k.name);
    keys.length = 0;
    await zip.close();
    // a log still being written (only `_journal/start.json`) has not given every sample its epochs
    const declaredK = header.name === 'header.json' ? inspectDeclaredK(doc) : undefined;
    return {
      format: 'inspect',
      ...(declaredK === undefined ? {} : { declaredK }),
      async *entries() {
        const again = await openZip(file, opts.onRead).catch((e: unknown) => {
          throw unreadableFile(file, e, 'results file');
        });
        try {
          for (const [i, name] of order.entries()) {
            const entry = again.entries.find((e) => e.name === name);
            if (!entry) throw new InputError('changed while it was imported; rerun the import', { file });
            const value = await (async () => {
              const buf = await again.read(entry, maxEntryBytes);
              return parseJson(buf.toString('utf8'), `${file}:${name}`);
            })();
            const s = InspectSampleSchema.safeParse(value);
            if (!s.success) throw new InputError('changed while it was imported; rerun the import', { file });
            yield { t: inspectTrial(s.data, i, ctx, file, opts), index: i, path: name };
          }
        } finally {
          await again.close();
        }
      },
    };
  } catch (e) {
    await zip.close().catch(() => undefined);
    throw e;
  }
};

/**
 * Opens another tool's results file for streaming (see above). `forced` is `--format`; without it the format is
 * told by the document's shape (an `.eval` or any zip is Inspect's binary log). A file that is not JSON, or of no
 * known shape, is a `NotAToolFile`.
 */
export const openToolFile = async (
  file: string,
  opts: ImportOptions,
  forced?: Format,
  maxEntryBytes = maxDocumentBytes(),
): Promise<ToolSource> => {
  if (forced === 'jsonl' || forced === 'csv') throw new Error('openToolFile: a flat format');
  const zip = isZip(await readHead(file, 4));
  if (zip) {
    if (forced && forced !== 'inspect')
      throw new InputError(`a zip is read as an Inspect .eval log, not as ${forced}`, { file });
    return openEval(file, opts, maxEntryBytes);
  }
  return openJsonDocument(file, opts, forced ?? (/\.eval$/i.test(file) ? 'inspect' : undefined));
};
