import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { SamplingPolicy, type SamplingPolicyInput } from '../../producers/sampler/policy.ts';
import { sampleFile } from '../../producers/sampler/sampleFile.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import { PRODUCER_VERSION } from '../../producers/version.ts';
import { InputError } from '../../schemas/errors.ts';
import { currentTraceRetention, DEFAULT_TRACE_TTL_DAYS } from '../../deploy/store.ts';
import { heading, passkCommand, table, text } from '../format/doc.ts';
import { foldedNext } from '../format/storeHeld.ts';
import { renderJson, renderTerminal } from '../format/render.ts';
import { epilog } from '../format/helpText.ts';
import { REDACT_HELP, redactFlag, redactorsOf } from './redactFlags.ts';
import { configOf, exitOnUnavailable, withEventLog } from '../context.ts';

const rate = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`a rate in [0, 1], got "${v}"`);
  return n;
};
const segmentRate = (v: string, prior: Record<string, number> = {}): Record<string, number> => {
  const at = v.lastIndexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected SEGMENT=RATE, got "${v}"`);
  return { ...prior, [v.slice(0, at)]: rate(v.slice(at + 1)) };
};
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** 100/1h: at most 100 per segment per hour. */
const cap = (v: string): { max: number; windowMs: number } => {
  const m = /^(\d+)\/(\d+)?(ms|s|m|h|d)$/.exec(v.trim());
  if (!m || Number(m[1]) < 1) throw new InvalidArgumentError(`expected MAX/WINDOW like 100/1h or 20/15m, got "${v}"`);
  return { max: Number(m[1]), windowMs: Number(m[2] ?? 1) * UNITS[m[3]!]! };
};
const collect = (v: string, prior: string[] = []): string[] => [...prior, v];

type SampleFlags = {
  policy?: string;
  name?: string;
  rate?: number;
  segmentRate?: Record<string, number>;
  cap?: { max: number; windowMs: number };
  keepTag?: string[];
  keepErrors: boolean;
  keepNegativeFeedback: boolean;
  redact?: [string, string][];
  seed?: number;
  json?: boolean;
};

const policyFrom = async (f: SampleFlags): Promise<SamplingPolicyInput> => {
  let base: Record<string, unknown> = {};
  if (f.policy) {
    try {
      base = JSON.parse(await readFile(f.policy, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      throw new InputError(`cannot read the policy: ${(e as Error).message}`, { file: f.policy });
    }
  }
  const alwaysKeep = { ...((base.alwaysKeep as object | undefined) ?? {}) } as Record<string, unknown>;
  if (!f.keepErrors) alwaysKeep.errors = false;
  if (!f.keepNegativeFeedback) alwaysKeep.negativeFeedback = false;
  if (f.keepTag) alwaysKeep.tags = f.keepTag;
  const merged = {
    ...base,
    ...(f.name ? { name: f.name } : {}),
    ...(f.rate === undefined ? {} : { rate: f.rate }),
    ...(f.segmentRate ? { segments: { ...((base.segments as object | undefined) ?? {}), ...f.segmentRate } } : {}),
    ...(f.cap ? { cap: f.cap } : {}),
    alwaysKeep,
  };
  const r = SamplingPolicy.safeParse(merged);
  if (!r.success)
    throw new InputError(r.error.issues[0]!.message, {
      ...(f.policy ? { file: f.policy } : {}),
      field: r.error.issues[0]!.path.join('.'),
    });
  return merged as SamplingPolicyInput;
};

/** A policy file as `--policy` reads it (for `passk ingest --otlp-policy` and `passk serve --otlp-policy`). */
export const readPolicyFile = (file: string): Promise<SamplingPolicyInput> =>
  policyFrom({ policy: file, keepErrors: true, keepNegativeFeedback: true });

export const sampleCommand = (program: Command): void => {
  program
    .command('sample')
    .description(
      'Applies a sampling policy to a JSON-lines file of production traces ({"trace_id", "agent_version", "segment"?,\n' +
        '"input", "output"?, "verdicts"?, "user_signals"?, "error_kind"?, "tags"?, "occurred_at"?}) and records each kept\n' +
        'trace as TraceSampled, with its inclusion probability. Personal data and secrets (emails, phones, cards,\n' +
        'IBANs, SSNs, national ids, keys and tokens, addresses; and --redact patterns) are redacted before anything\n' +
        'is written. Errors, negative feedback and high_risk tags are always kept.',
    )
    .argument('<file>', 'traces, one JSON object per line')
    .option(
      '--policy <file>',
      'a policy as JSON: {"name", "rate", "segments": {SEG: RATE}, "alwaysKeep": {...}, "cap": {"max", "windowMs"}}',
    )
    .option('--name <name>', 'policy name (recorded on every trace)')
    .option('--rate <r>', 'uniform rate in [0, 1] (default 1)', rate)
    .option('--segment-rate <seg=r>', 'stratified rate for one segment (repeatable)', segmentRate)
    .option('--cap <max/window>', 'at most MAX per segment per window of event time, e.g. 100/1h (a reservoir)', cap)
    .option('--keep-tag <tag>', 'always keep traces with this tag (repeatable; default high_risk)', collect)
    .option('--no-keep-errors', 'do not always keep traces that ended in an error')
    .option('--no-keep-negative-feedback', 'do not always keep traces with negative user feedback')
    .option('--redact <name=regex>', REDACT_HELP, redactFlag)
    .option('--seed <n>', 'seed of the sampling draws (reproducible samples)', (v) => Number.parseInt(v, 10))
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk sample examples/traces.jsonl --rate 0.05 --segment-rate enterprise=0.5 --cap 200/1h --seed 7
  passk sample examples/traces.jsonl --policy policy.json --redact 'ticket=TCK-\\d{6}' --json

policy.json is yours: the policy as JSON, e.g. {"name": "support", "rate": 0.1,
"segments": {"enterprise": 0.5}}.

Exit codes: 0 ok, 2 bad input (file, line and field named; a bad rate, cap or pattern), 3 the event log is unreachable.`),
    )
    .action(async (file: string, flags: SampleFlags, cmd: Command) => {
      const policy = await policyFrom(flags);
      const redactors = redactorsOf(configOf(cmd), flags.redact);
      const report = await withEventLog(cmd, async (log) => {
        const recorder = createRecorder({ publisher: log.publisher, producer: `passk-sampler/${PRODUCER_VERSION}` });
        try {
          return await sampleFile(file, {
            policy,
            recorder,
            redactors,
            ...(flags.seed === undefined ? {} : { seed: flags.seed }),
            // the store's own (set by passk migrate --trace-ttl-days), read only when a kept trace is old enough to
            // matter; else the default a new store gets, said as an assumption
            retention: async () => {
              const days = await currentTraceRetention(configOf(cmd));
              return days === undefined ? { days: DEFAULT_TRACE_TTL_DAYS, assumed: true } : { days, assumed: false };
            },
          });
        } finally {
          await recorder.close();
        }
      }).catch(exitOnUnavailable);
      if (flags.json) return void process.stdout.write(renderJson(report));
      const old = report.beyondRetention;
      process.stdout.write(
        renderTerminal([
          heading(`${report.read} traces read · policy ${report.policy}`, 1),
          table(
            ['segment', 'seen', 'kept', 'always kept'],
            Object.entries(report.segments).map(([s, v]) => [s, String(v.seen), String(v.kept), String(v.alwaysKept)]),
          ),
          ...(old && old.traces > 0
            ? [
                text(
                  `${old.traces} kept trace${old.traces === 1 ? ' is' : 's are'} dated before ` +
                    `${new Date(old.before).toISOString().slice(0, 10)}, older than ` +
                    (old.assumed
                      ? `the store's retention (${old.days} days unless changed; the store could not be read`
                      : `the store's trace retention (${old.days} days, read from the store`) +
                    `; docs/store.md#retention): they are in the event log ` +
                    `(review --from log lists them) but will not be stored, so review will not list them. ` +
                    'A line without occurred_at is dated when it is sampled.',
                  'warn',
                ),
              ]
            : []),
          foldedNext(configOf(cmd), {
            then: [passkCommand('review')],
            what: 'these traces',
            note: 'the sampled failures to confirm',
          }),
        ]),
      );
    });
};
