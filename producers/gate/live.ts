import { randomBytes } from 'node:crypto';
import { confirmRunArgs, plainPasskCommand, type PasskCommand } from '../../schemas/commandLine.ts';
import type { EventLog, EventSource, LogEvent } from '../../processors/ports.ts';
import type { ComparisonDeclared, ConfirmationRequested } from '../../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import { InputError } from '../../schemas/errors.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { sha256 } from '../importers/common.ts';
import { readLog } from '../logReader.ts';
import { readRunSources } from './runSources.ts';
import { PRODUCER_VERSION } from '../version.ts';

/**
 * The live gate's protocol, for the SDK and `passk gate --declare --wait` alike: declare a comparison of two agent
 * versions on passk.decisions (`declareComparison`), then follow that topic until the processors' `GateEvaluated`
 * for it arrives (`waitForVerdict`). The processors decide; this module only asks and listens.
 */

/** One comparison per (suite, dataset version, baseline, candidate): declaring it again changes nothing. */
export const comparisonId = (suite: string, datasetVersion: string, baseline: string, candidate: string): string =>
  `gate-${sha256(JSON.stringify([suite, datasetVersion, baseline, candidate])).slice(0, 16)}`;

export interface DeclareInput {
  readonly baseline: string;
  readonly candidate: string;
  readonly suite?: string;
  readonly datasetVersion?: string;
  readonly mustNotBreak: readonly string[];
  readonly rules: { zero_forbidden_actions?: boolean; max_pass_at_1_drop?: number };
  readonly requiredAttempts?: number;
  /** Extra attempts per version the processors ask for on each suspected regression (0: none). @default 3 */
  readonly confirmationAttempts?: number;
  /** More attempts than that on a suspected regression that is a must-not-break row. @default 0 */
  readonly mustNotBreakExtraAttempts?: number;
}

/** Where both versions have trials on the log: (suite, dataset id, dataset version) triples. */
const scopesOf = async (log: EventLog, versions: readonly string[]) => {
  const scopes = new Map<
    string,
    { suite: string; dataset_id?: string; dataset_version: string; versions: Set<string> }
  >();
  await readLog(log, { topics: [TOPICS.trials] }, ({ event: e }) => {
    if (e.type !== 'TrialRecorded' || !versions.includes(e.agent.version)) return;
    const key = JSON.stringify([e.suite, e.dataset_version]);
    const s = scopes.get(key) ?? {
      suite: e.suite,
      ...(e.dataset_id ? { dataset_id: e.dataset_id } : {}),
      dataset_version: e.dataset_version,
      versions: new Set<string>(),
    };
    s.versions.add(e.agent.version);
    scopes.set(key, s);
  });
  return [...scopes.values()];
};

/**
 * The ComparisonDeclared for these flags: suite and dataset version from the flags, else from the trials of both
 * versions, else (the candidate has not run yet) from the baseline's, when it ran on one suite and dataset version.
 */
export const declaration = async (
  log: EventLog,
  d: DeclareInput,
  now: number,
  producer = `passk-sdk/${PRODUCER_VERSION}`,
): Promise<ComparisonDeclared> => {
  if (d.baseline === d.candidate)
    throw new InputError(
      `baseline and candidate are both ${d.baseline}: a version compared with itself has no change to show`,
      { field: '--candidate' },
    );
  const scopes = (await scopesOf(log, [d.baseline, d.candidate])).filter(
    (s) => (!d.suite || s.suite === d.suite) && (!d.datasetVersion || s.dataset_version === d.datasetVersion),
  );
  const both = scopes.filter((s) => s.versions.size === 2);
  let scope: { suite: string; dataset_id?: string; dataset_version: string };
  if (d.suite && d.datasetVersion)
    scope = both[0] ?? scopes[0] ?? { suite: d.suite, dataset_version: d.datasetVersion };
  else if (both.length === 1) scope = both[0]!;
  else if (both.length === 0 && scopes.length === 1 && scopes[0]!.versions.has(d.baseline))
    scope = scopes[0]!; // declared before the candidate runs: the baseline's one scope (the live sequential gate)
  else if (both.length === 0)
    throw new InputError(
      `no suite and dataset version on the log has trials of both ${d.baseline} and ${d.candidate}: run both first, or name them with --suite and --dataset-version`,
      { field: '--dataset-version' },
    );
  else
    throw new InputError(
      `both versions ran on several suites and dataset versions (${both.map((s) => `${s.suite} ${s.dataset_version}`).join(', ')}): pick one with --suite and --dataset-version`,
      { field: '--dataset-version' },
    );
  const id = comparisonId(scope.suite, scope.dataset_version, d.baseline, d.candidate);
  const dataset = scope.dataset_id ?? scope.suite;
  const rules = Object.keys(d.rules).length ? { rules: d.rules } : {};
  return {
    event_id: deterministicEventId(now, 'ComparisonDeclared', id),
    type: 'ComparisonDeclared',
    schema_version: 1,
    occurred_at: now,
    producer,
    comparison_id: id,
    suite: scope.suite,
    dataset_id: dataset,
    dataset_version: scope.dataset_version,
    baseline: d.baseline,
    candidate: d.candidate,
    ...(d.mustNotBreak.length ? { must_not_break: [...d.mustNotBreak] } : {}),
    ...(d.requiredAttempts ? { required_attempts: d.requiredAttempts } : {}),
    ...(d.confirmationAttempts === undefined ? {} : { confirmation_attempts: d.confirmationAttempts }),
    ...(d.mustNotBreakExtraAttempts ? { must_not_break_extra_attempts: d.mustNotBreakExtraAttempts } : {}),
    ...rules,
  };
};

/** What the log already holds of one comparison: its first declaration, and the processors' verdict. */
const priorOf = async (
  log: EventLog,
  comparison: string,
): Promise<{ declared?: ComparisonDeclared; verdict?: GateEvaluated }> => {
  let declared: ComparisonDeclared | undefined;
  let verdict: GateEvaluated | undefined;
  await readLog(log, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (e.type === 'ComparisonDeclared' && e.comparison_id === comparison) declared ??= e;
    else if (e.type === 'GateEvaluated' && e.gate_id === comparison) verdict ??= e;
  });
  return { ...(declared ? { declared } : {}), ...(verdict ? { verdict } : {}) };
};

export interface Declared {
  /** The comparison as declared: the first declaration on the log when there was one (it holds), else this one. */
  readonly declared: ComparisonDeclared;
  /** False when the comparison was declared before: nothing was published. */
  readonly published: boolean;
  /** The processors' verdict, when they have already decided it. */
  readonly verdict?: GateEvaluated;
}

/**
 * Declares a comparison of two versions for the processors to decide: suite and dataset version from the input, else
 * from the trials of both versions on the log. Declaring it again publishes nothing (the first declaration holds).
 */
export const declareComparison = async (
  log: EventLog,
  d: DeclareInput,
  opts: { now?: number; producer?: string } = {},
): Promise<Declared> => {
  const declared = await declaration(log, d, opts.now ?? Date.now(), opts.producer);
  const prior = await priorOf(log, declared.comparison_id);
  if (prior.declared)
    return { declared: prior.declared, published: false, ...(prior.verdict ? { verdict: prior.verdict } : {}) };
  await log.publisher.publish([declared]);
  return { declared, published: true };
};

/**
 * Follows passk.decisions from the start until `pick` returns something for one of its events, or `waitMs` passes
 * (undefined then). Each call is a throwaway consumer group: nothing is committed.
 */
const follow = async <T>(
  log: EventLog,
  waitMs: number,
  pick: (e: LogEvent['event']) => T | undefined | Promise<T | undefined>,
): Promise<T | undefined> => {
  const consumer = await log.consumer({
    groupId: `passk-gate-wait-${process.pid}-${randomBytes(6).toString('hex')}`,
    topics: [TOPICS.decisions],
    fromBeginning: true,
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
  const found = (async () => {
    for await (const batch of consumer.batches())
      for (const { event } of batch.events) {
        const hit = await pick(event);
        if (hit !== undefined) return hit;
      }
    return undefined;
  })();
  try {
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
    await consumer.close();
    await found.catch(() => undefined);
  }
};

/**
 * Follows passk.decisions until the comparison's GateEvaluated arrives, or `waitMs` passes. Tells stderr
 * when the processors ask for confirmation runs (someone must run them: `passk run --confirmations`), with the
 * commands that do, each on a line of its own after the message (indented: a terminal breaks it so that it still
 * pastes as one, cli/format/render.ts `fitStderr`), as `command` shows them (the CLI's `passkCommand`): with the dataset file and agent each
 * version's latest `passk run` recorded, as `passk gate --status` shows them (`readRunSources`), else with
 * ROWS.jsonl and AGENT_OF_… standing in for them.
 */
export const waitForVerdict = (
  log: EventLog,
  comparison: string,
  waitMs: number,
  say: (line: string) => void = () => undefined,
  command: PasskCommand = plainPasskCommand,
): Promise<GateEvaluated | undefined> =>
  follow(log, waitMs, async (e) => {
    if (e.type === 'GateEvaluated' && e.gate_id === comparison) return e;
    if (e.type === 'ConfirmationRequested' && e.comparison_id === comparison)
      say(await confirmationLine(log, e, command));
    return undefined;
  });

const confirmationLine = async (log: EventLog, e: ConfirmationRequested, command: PasskCommand): Promise<string> => {
  const sources = await readRunSources(log);
  const runs = [e.baseline, e.candidate].map((version) => {
    const source = sources.source(e.suite, e.dataset_version, version);
    return {
      source,
      line: command(confirmRunArgs({ version, suite: e.suite, requested: true, ...(source ? { source } : {}) })),
    };
  });
  const files = runs.every((r) => r.source)
    ? "the dataset file and agent of each version's latest passk run"
    : "each version's agent and the dataset file (ROWS.jsonl, AGENT_OF_…)";
  return `the processors ask for confirmation runs: ${e.rows.length} row(s) × ${e.attempts} attempts on both versions${e.must_not_break ? ` (${e.must_not_break.attempts} on the must-not-break ones)` : ''} (${e.rows.slice(0, 8).join(', ')}); run them with ${files}, one command a line, in order:\n${runs.map((r) => `  ${r.line}`).join('\n')}`;
};

/**
 * The processors' next word on a comparison: its confirmation request, or its verdict when they decide without
 * one (no suspected regression), whichever comes first; undefined after `waitMs`. A caller that runs the
 * confirmations itself (the demo) answers the request, then awaits the verdict with `waitForVerdict`.
 */
export const waitForDecisionStep = (
  log: EventLog,
  comparison: string,
  waitMs: number,
): Promise<ConfirmationRequested | GateEvaluated | undefined> =>
  follow(log, waitMs, (e) =>
    (e.type === 'GateEvaluated' && e.gate_id === comparison) ||
    (e.type === 'ConfirmationRequested' && e.comparison_id === comparison)
      ? e
      : undefined,
  );

/**
 * The processors' verdict on a candidate, when one of its comparisons on this suite and dataset version is decided
 * (the first in log order): what `passk run --adaptive` looks for between rounds, to stop once the gate is decided.
 */
export const verdictOn = async (
  source: EventSource,
  scope: { readonly suite: string; readonly dataset_version: string; readonly candidate: string },
): Promise<GateEvaluated | undefined> => {
  let verdict: GateEvaluated | undefined;
  await readLog(source, { topics: [TOPICS.decisions] }, ({ event: e }) => {
    if (
      e.type === 'GateEvaluated' &&
      e.suite === scope.suite &&
      e.dataset_version === scope.dataset_version &&
      e.candidate === scope.candidate
    )
      verdict ??= e;
  });
  return verdict;
};
