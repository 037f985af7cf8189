import type { Command } from 'commander';
import {
  emptyBook,
  foldBookInto,
  pastHorizon,
  progressOf,
  type ComparisonProgress,
  type ComparisonState,
  type GateBook,
  type GateView,
} from '../../processors/folds/gates.ts';
import { evolveRow, retractRow, type StreamRowState } from '../../processors/folds/rowState.ts';
import { versionKeyOf } from '../../processors/folds/versionSummary.ts';
import { maxOf } from '../../processors/core/arrays.ts';
import { isConfirmationRun } from '../../processors/core/screening.ts';
import type { EventLog } from '../../processors/ports.ts';
import { readDatasets } from '../../producers/datasets/index.ts';
import { readLog } from '../../producers/logReader.ts';
import { requestedAttempts, type RunClosed } from '../../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import { InputError } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { PRODUCER_VERSION } from '../../producers/version.ts';
import { EXIT } from '../exitCodes.ts';
import { confirmRunArgs } from '../../schemas/commandLine.ts';
import { heading, nextCommand, PASSK, passkCommand, quoteArg, text, type Block } from '../format/doc.ts';
import {
  decidedAfter,
  evaluatedView,
  gateNext,
  ruleBlocks,
  unprotectedLine,
  type RunScope,
} from '../format/gateDoc.ts';
import { rowList } from '../format/numbers.ts';
import { renderJson, renderMarkdown, renderTerminal, writeStderr } from '../format/render.ts';
import type { OutputFormat } from './offlineOptions.ts';
import { configOf, exitOnUnavailable, withEventLog } from '../context.ts';
import { declareComparison, waitForVerdict, type DeclareInput } from '../../producers/gate/index.ts';
import { createRunSources, readRunSources } from '../../producers/gate/runSources.ts';

/** `passk gate --declare`, `--wait` and `--status`: the live gate of the processors, driven from the command line. */

const PRODUCER = `passk-cli/${PRODUCER_VERSION}`;

/** The decisions topic folded as the gates processor folds it. */
export const readBook = async (log: EventLog): Promise<GateBook> => {
  const book = emptyBook();
  await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (
      e.type === 'ComparisonDeclared' ||
      e.type === 'ConfirmationRequested' ||
      e.type === 'GateEvaluated' ||
      e.type === 'RunClosed' ||
      e.type === 'AdaptiveRoundDecided'
    )
      foldBookInto(book, e);
  });
  return book;
};

/** Where the verdict came from (stderr: stdout is the document `passk gate` prints for the same comparison). */
const provenanceLine = (e: GateEvaluated): string =>
  `comparison ${e.gate_id}, decided by the processors from ${e.evidence.length} rows' recorded attempts` +
  (e.repeated_verdict ? '; a repeated verdict on this candidate (gate shopping is flagged)' : '');

const print = (format: OutputFormat, blocks: Block[], json: unknown) =>
  process.stdout.write(
    format === 'json' ? renderJson(json) : format === 'markdown' ? renderMarkdown(blocks) : renderTerminal(blocks),
  );

/**
 * What the candidate's attempts on the comparison came to, when an adaptive run (`passk run --adaptive`) made
 * them: every attempt recorded (confirmations included, and counted apart), against fixed k = its max-k on every row.
 */
export const adaptiveCost = async (
  log: EventLog,
  scope: { suite: string; dataset_version: string; agent_version: string },
): Promise<{ attempts: number; confirmations: number; fixed: number; rows: number; maxK: number } | undefined> => {
  let maxK = 0;
  const rows = new Set<string>();
  await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (
      e.type === 'AdaptiveRoundDecided' &&
      e.suite === scope.suite &&
      e.dataset_version === scope.dataset_version &&
      e.agent_version === scope.agent_version
    ) {
      maxK = Math.max(maxK, e.max_k);
      for (const d of e.decisions) rows.add(d.row_id);
    }
  });
  if (maxK === 0) return undefined;
  const trials = new Set<string>();
  const confirmations = new Set<string>();
  const confirmation = isConfirmationRun({});
  await readLog(log, { topics: [TOPICS.trials] }, ({ event: e }) => {
    if (
      e.type === 'TrialRecorded' &&
      e.suite === scope.suite &&
      e.dataset_version === scope.dataset_version &&
      e.agent.version === scope.agent_version
    )
      (confirmation(e.run_id) ? confirmations : trials).add(e.event_id);
  });
  return {
    attempts: trials.size + confirmations.size,
    confirmations: confirmations.size,
    fixed: rows.size * maxK,
    rows: rows.size,
    maxK,
  };
};

export const runDeclare = async (
  cmd: Command,
  d: DeclareInput,
  opts: { waitMs?: number; format: OutputFormat },
): Promise<void> => {
  const say = (line: string) => writeStderr(`passk: ${line}\n`);
  const result = await withEventLog(cmd, async (log) => {
    const { declared, published, verdict } = await declareComparison(log, d, { producer: PRODUCER });
    if (!published)
      say(
        `comparison ${declared.comparison_id} was declared before (${verdict ? 'decided' : 'not decided yet'}); that declaration holds`,
      );
    else
      say(
        `declared comparison ${declared.comparison_id}: ${d.baseline} → ${d.candidate} on ${declared.suite} (dataset ${declared.dataset_id} ${declared.dataset_version})`,
      );
    if (opts.waitMs === undefined) return { declared, verdict };
    say(
      `waiting up to ${Math.round(opts.waitMs / 1000)} s for the processors' verdict (${passkCommand('process')} or ${passkCommand('serve')} must be running)`,
    );
    const decided = verdict ?? (await waitForVerdict(log, declared.comparison_id, opts.waitMs, say, passkCommand));
    if (!decided) {
      // what `passk gate --status` says of this comparison, confirmation runs in full included
      const book = await readBook(log);
      const state = book.comparisons[declared.comparison_id];
      const status = state ? statusOf(state, await logView(log, configOf(cmd).gateHorizonDays)) : undefined;
      return { declared, verdict: undefined, status };
    }
    const cost = await adaptiveCost(log, { ...declared, agent_version: declared.candidate });
    // the confirmation runs a failing verdict still needs, with each version's dataset file and agent as
    // `passk gate --status` gives them (its latest passk run on the comparison's suite and dataset version)
    const sources = decided.verdict === 'fail' ? await readRunSources(log) : undefined;
    const known: RunScope | undefined = sources && {
      suite: declared.suite,
      sources: Object.fromEntries(
        [declared.baseline, declared.candidate].flatMap((v) => {
          const source = sources.source(declared.suite, declared.dataset_version, v);
          return source ? [[v, source]] : [];
        }),
      ),
    };
    return { declared, verdict: decided, cost, known };
  }).catch(exitOnUnavailable);
  if (opts.waitMs === undefined) {
    print(
      opts.format,
      [
        text(`declared ${result.declared.comparison_id}`),
        nextCommand(
          passkCommand(`gate --status --comparison ${quoteArg(result.declared.comparison_id)}`),
          // declared before and decided since: there is nothing left to wait for
          result.verdict ? 'its verdict' : 'what it waits for',
        ),
      ],
      result.declared,
    );
    return;
  }
  if (!result.verdict) {
    print(
      opts.format,
      [
        text(`no verdict on ${result.declared.comparison_id} yet`, 'warn'),
        ...('status' in result && result.status ? statusBlocks(result.status) : []),
        nextCommand(
          passkCommand(`gate --status --comparison ${quoteArg(result.declared.comparison_id)}`),
          'what it waits for',
        ),
      ],
      { comparison_id: result.declared.comparison_id, verdict: null },
    );
    process.exitCode = EXIT.undecided;
    return;
  }
  writeStderr(`passk: ${provenanceLine(result.verdict)}\n`);
  if ('cost' in result && result.cost)
    writeStderr(`passk: ${decidedAfter({ ...result.cost, candidate: result.declared.candidate })}\n`);
  const unprotected = unprotectedLine(evaluatedView(result.verdict).must_not_break);
  // once: in the terminal verdict, else (JSON, Markdown: read by a script) on stderr
  if (unprotected && opts.format !== 'table') writeStderr(`passk: warning: ${unprotected}\n`);
  const blocks = ruleBlocks(evaluatedView(result.verdict));
  // the same document as `passk gate --from-store` on these versions, next command included
  print(
    opts.format,
    opts.format === 'table'
      ? [...blocks, ...gateNext(result.verdict, '--from-store', 'known' in result ? result.known : undefined)]
      : blocks,
    result.verdict,
  );
  process.exitCode = result.verdict.verdict === 'pass' ? EXIT.ok : EXIT.failed;
};

/**
 * What one comparison is waiting for, as the processors judge it (`progressOf`, on the row states,
 * datasets and closed runs the log holds): per version, rows short of graded attempts and closed runs
 * not yet fully recorded; where the row set comes from (a dataset that is not published cannot give
 * it); confirmation attempts not yet recorded.
 */
export interface ComparisonStatus {
  readonly comparison_id: string;
  readonly suite: string;
  readonly dataset_version: string;
  readonly baseline: string;
  readonly candidate: string;
  readonly status: ComparisonState['status'];
  readonly verdict?: 'pass' | 'fail';
  readonly required_attempts: number;
  /** `dataset`: the published dataset's rows; `declared`: the declared row count; `unknown`: neither. */
  readonly row_set: ComparisonProgress['row_set'];
  readonly rows: number;
  readonly dataset?: { readonly id: string; readonly published: boolean };
  /** Per version: complete as the gate counts it (every known row has its attempts, or its closed runs are recorded). */
  readonly complete: Record<string, boolean>;
  /** Per version: rows with fewer graded attempts than required. */
  readonly missing: Record<string, { row_id: string; graded: number }[]>;
  /** Per version: its closed runs (RunClosed) on the dataset version, trials declared and recorded. */
  readonly runs: Record<string, { run_id: string; trials: number; recorded: number }[]>;
  /**
   * Under the gates' horizon (`PASSK_GATE_HORIZON_DAYS`), per version with any: its runs on the dataset version
   * that closed more than the horizon before the newest run, which the gate no longer counts (not in `runs`).
   */
  readonly past_horizon?: { readonly days: number; readonly runs: Record<string, string[]> };
  /** Confirmation rows still short of graded attempts, per version. */
  readonly confirmations?: {
    run_id: string;
    attempts: number;
    waiting: Record<string, string[]>;
    /** Per version, the dataset file and agent of its latest `passk run` (RunFinished), when recorded. */
    sources: Record<string, RunSource>;
  };
}

/** The dataset file and agent a version's latest `passk run` used (RunFinished), when it recorded them. */
type RunSource = { dataset_path: string; agent_spec: string };
type StatusView = GateView & {
  source(suite: string, datasetVersion: string, agentVersion: string): RunSource | undefined;
  /** A version's closed runs past the gates' horizon: those `closed` leaves out, as the processors do. */
  pastHorizon(suite: string, agentVersion: string): readonly RunClosed[];
  readonly horizonDays: number;
};

/**
 * The gates' view, built from the log: row states from the trials, the datasets, every RunClosed (under the gates'
 * horizon, those within it of the newest, as the processors see them: `addClosed`); run sources.
 */
const logView = async (log: EventLog, horizonDays = 0): Promise<StatusView> => {
  const rows = new Map<string, Map<string, StreamRowState>>();
  const sources = createRunSources();
  await readLog(log, { topics: [TOPICS.trials] }, ({ event: e }) => {
    sources.add(e);
    if (e.type !== 'TrialRecorded' && e.type !== 'RunRetracted') return;
    const agent_version = e.type === 'TrialRecorded' ? e.agent.version : e.agent_version;
    const key = versionKeyOf({ suite: e.suite, dataset_version: e.dataset_version, agent_version });
    const table = rows.get(key) ?? rows.set(key, new Map()).get(key)!;
    const was = table.get(e.row_id);
    table.set(e.row_id, e.type === 'TrialRecorded' ? evolveRow(was, e) : retractRow(was, e));
  });
  const closed = new Map<string, RunClosed>();
  await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (e.type === 'RunClosed') closed.set(e.event_id, e);
  });
  const datasets = await readDatasets(log);
  const none = new Map<string, StreamRowState>();
  const horizonMs = Math.round(horizonDays * 86_400_000);
  const newest = Math.max(0, maxOf([...closed.values()].map((r) => r.occurred_at)));
  const runsOf = (suite: string, version: string, past: boolean) =>
    [...closed.values()].filter(
      (r) => r.suite === suite && r.agent_version === version && pastHorizon(newest, r.occurred_at, horizonMs) === past,
    );
  return {
    horizonDays,
    rows: (suite, dataset_version, agent_version) =>
      rows.get(versionKeyOf({ suite, dataset_version, agent_version })) ?? none,
    dataset: (id) => datasets.get(id),
    closed: (suite, version) => runsOf(suite, version, false),
    pastHorizon: (suite, version) => runsOf(suite, version, true),
    source: sources.source,
  };
};

const statusOf = (c: ComparisonState, view: StatusView): ComparisonStatus => {
  const d = c.declared;
  const p = progressOf(c, view);
  const versions = [p.baseline, p.candidate];
  const req = c.confirmation;
  const confirmedRows = (version: string, r: NonNullable<typeof req>) =>
    r.rows.filter(
      (row) =>
        (view
          .rows(d.suite, d.dataset_version, version)
          .get(row)
          ?.attempts.filter((a) => a.passed !== null && a.run_id === r.run_id).length ?? 0) < requestedAttempts(r, row),
    );
  return {
    comparison_id: d.comparison_id,
    suite: d.suite,
    dataset_version: d.dataset_version,
    baseline: d.baseline,
    candidate: d.candidate,
    status: c.status,
    ...(c.verdict ? { verdict: c.verdict.verdict } : {}),
    required_attempts: p.required_attempts,
    row_set: p.row_set,
    rows: p.rows,
    ...(p.dataset ? { dataset: p.dataset } : {}),
    complete: Object.fromEntries(versions.map((v) => [v.version, v.complete])),
    missing: Object.fromEntries(versions.map((v) => [v.version, [...v.short]])),
    runs: Object.fromEntries(versions.map((v) => [v.version, [...v.runs]])),
    ...pastHorizonOf(d, view),
    ...(req
      ? {
          confirmations: {
            run_id: req.run_id,
            attempts: req.attempts,
            waiting: Object.fromEntries([d.baseline, d.candidate].map((v) => [v, confirmedRows(v, req)])),
            sources: Object.fromEntries(
              [d.baseline, d.candidate].flatMap((v) => {
                const source = view.source(d.suite, d.dataset_version, v);
                return source ? [[v, source]] : [];
              }),
            ),
          },
        }
      : {}),
  };
};

/** The versions' runs on the dataset version the gates' horizon hides, when there are any. */
const pastHorizonOf = (d: ComparisonState['declared'], view: StatusView): Pick<ComparisonStatus, 'past_horizon'> => {
  const runs = Object.fromEntries(
    [d.baseline, d.candidate].flatMap((v) => {
      const ids = view
        .pastHorizon(d.suite, v)
        .filter((r) => r.dataset_version === d.dataset_version)
        .map((r) => r.run_id);
      return ids.length > 0 ? [[v, ids]] : [];
    }),
  );
  return Object.keys(runs).length > 0 ? { past_horizon: { days: view.horizonDays, runs } } : {};
};

/** Where the rows come from, when that decides how the gate can call a version complete. */
const rowSetLine = (s: ComparisonStatus): Block | undefined => {
  if (s.row_set !== 'unknown') return undefined;
  const why = s.dataset
    ? `dataset ${s.dataset.id} has no published version ${s.dataset_version}`
    : 'the comparison names no dataset';
  return text(
    `the rows are not known (${why}, and no row count was declared): a version is complete once a run of it on ${s.suite} ${s.dataset_version} is closed and all its trials are recorded (${passkCommand(`dataset publish ROWS.jsonl --dataset ${quoteArg(s.dataset?.id ?? s.suite)} --version ${quoteArg(s.dataset_version)}`)} gives the rows, ROWS.jsonl their file)`,
    'warn',
  );
};

/** One version's line: complete, or exactly what it lacks. */
const versionLine = (s: ComparisonStatus, v: string): Block => {
  const short = s.missing[v] ?? [];
  const runs = s.runs[v] ?? [];
  const runList = runs.map((r) => `${r.run_id} ${r.recorded}/${r.trials} trials recorded`).join(', ');
  if (s.complete[v])
    return text(
      s.row_set !== 'unknown' && short.length === 0
        ? `${v}: complete, every row has ${s.required_attempts} graded attempts`
        : `${v}: complete, its closed runs are recorded (${runList})`,
      'good',
    );
  const parts: string[] = [];
  if (s.row_set !== 'unknown' && short.length > 0)
    parts.push(
      `${short.length} row(s) short of ${s.required_attempts} graded attempts: ${rowList(
        short.map((r) => `${r.row_id} (${r.graded})`),
        10,
      )} (${PASSK} run)`,
    );
  const past = s.past_horizon?.runs[v] ?? [];
  if (runs.length > 0)
    parts.push(
      `closed runs not fully recorded yet: ${runList} (${passkCommand('process --until-caught-up')} records them)`,
    );
  else if (past.length > 0)
    parts.push(
      `its runs on ${s.suite} ${s.dataset_version} (${rowList(past, 5)}) closed more than ${s.past_horizon!.days} days before the newest run, past the gates' horizon (PASSK_GATE_HORIZON_DAYS), so they no longer count: publish the dataset (${passkCommand(`dataset publish ROWS.jsonl --dataset ${quoteArg(s.dataset?.id ?? s.suite)}`)}) or run ${v} again`,
    );
  else
    parts.push(
      `no run closed on ${s.suite} ${s.dataset_version} yet (${PASSK} run and ${PASSK} import close theirs; ${passkCommand('process --until-caught-up')} forwards them)`,
    );
  return text(`${v}: waiting: ${parts.join('; ')}`, 'warn');
};

/**
 * `passk run --confirmations` for one version: in full when its latest `passk run` recorded the dataset file and
 * agent (RunFinished), else with ROWS.jsonl and AGENT_OF_… standing in for them.
 */
const confirmationsCommand = (s: ComparisonStatus, version: string): string => {
  const source = s.confirmations?.sources[version];
  return passkCommand(confirmRunArgs({ version, suite: s.suite, requested: true, ...(source ? { source } : {}) }));
};

const statusBlocks = (s: ComparisonStatus): Block[] => {
  const lines: Block[] = [
    heading(
      `${s.comparison_id}: ${s.baseline} → ${s.candidate} on ${s.suite} (${s.dataset_version}): ${s.status}${s.verdict ? `, ${s.verdict.toUpperCase()}` : ''}`,
      1,
      s.status === 'decided' ? (s.verdict === 'pass' ? 'good' : 'bad') : 'warn',
    ),
  ];
  if (s.status === 'decided')
    return [
      ...lines,
      nextCommand(
        passkCommand(`gate --status --comparison ${quoteArg(s.comparison_id)} --json`),
        'the verdict as JSON',
      ),
    ];
  const rowSet = rowSetLine(s);
  if (rowSet) lines.push(rowSet);
  if (s.status === 'open') lines.push(versionLine(s, s.baseline), versionLine(s, s.candidate));
  if (s.confirmations) {
    for (const [v, rows] of Object.entries(s.confirmations.waiting))
      if (rows.length)
        lines.push(
          text(
            `${v}: confirmation run ${s.confirmations.run_id} still needs ${s.confirmations.attempts} graded attempts on ${rowList(rows, 10)}`,
            'warn',
          ),
          // on a line of its own, as it runs (inside the sentence it was wrapped with it: cut where it can't paste)
          nextCommand(confirmationsCommand(s, v)),
        );
      else lines.push(text(`${v}: confirmation attempts recorded`, 'good'));
  } else if (s.status === 'open' && s.complete[s.baseline] && s.complete[s.candidate])
    lines.push(
      text(
        `both versions are complete: the processors decide at their next step (is ${passkCommand('process')} or ${passkCommand('serve')} running?)`,
      ),
    );
  return lines;
};

export const runStatus = async (cmd: Command, opts: { comparison?: string; format: OutputFormat }): Promise<void> => {
  const statuses = await withEventLog(cmd, async (log) => {
    const book = await readBook(log);
    const all = Object.values(book.comparisons).filter(
      (c) => !opts.comparison || c.declared.comparison_id === opts.comparison,
    );
    if (opts.comparison && all.length === 0)
      throw new InputError(
        `no comparison ${opts.comparison} is declared; declared: ${Object.keys(book.comparisons).join(', ') || 'none'}`,
        { field: '--comparison' },
      );
    if (all.length === 0) return [];
    const view = await logView(log, configOf(cmd).gateHorizonDays);
    return all.map((c) => statusOf(c, view));
  }).catch(exitOnUnavailable);
  if (statuses.length === 0) {
    print(
      opts.format,
      [text(`no comparison is declared: ${passkCommand('gate --declare --baseline A --candidate B')}`)],
      {
        comparisons: [],
      },
    );
    return;
  }
  print(opts.format, statuses.flatMap(statusBlocks), { comparisons: statuses });
};
