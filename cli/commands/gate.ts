import { runSources } from '../../sinks/clickhouse/queries/runSources.ts';
import { withReader } from '../context.ts';
import { InvalidArgumentError, type Command } from 'commander';
import { calibrateJudges, evaluateGate, MUST_NOT_BREAK_TAG, type GateRules } from '../../processors/core/index.ts';
import { readGateRulesFile, readJudgmentFile, readMustNotBreakFile } from '../../producers/files/index.ts';
import { InputError } from '../../schemas/errors.ts';
import { EXIT } from '../exitCodes.ts';
import { sourceArgs } from '../format/doc.ts';
import { gateNext, ruleBlocks, unprotectedLine } from '../format/gateDoc.ts';
import { renderJson, renderMarkdown, renderTerminal, writeStderr } from '../format/render.ts';
import { addCompareOptions, compareOptions, pairVersions, refuseSameVersion, type CompareFlags } from './compare.ts';
import { runDeclare, runStatus } from './gateLive.ts';
import { duration, fraction, loadGroups, outputFormat } from './offlineOptions.ts';
import { epilog } from '../format/helpText.ts';

type GateFlags = CompareFlags & {
  mustNotBreak?: string;
  mustNotBreakTag: string;
  rules?: string;
  zeroForbidden?: boolean;
  maxPass1Drop?: number;
  passHat?: { k: number; min: number; tag: string }[];
  judgeAgreement?: number;
  judgments?: string;
  declare?: boolean;
  wait?: number;
  status?: boolean;
  comparison?: string;
  requiredAttempts?: number;
};

/** `--pass-hat K:MIN:TAG`, e.g. 3:0.9:critical. */
const passHatBar = (v: string, prior: GateFlags['passHat'] = []): NonNullable<GateFlags['passHat']> => {
  const m = /^(\d+):([0-9.]+):(.+)$/.exec(v);
  const k = Number(m?.[1]);
  const min = Number(m?.[2]);
  if (!m || !Number.isInteger(k) || k < 1 || !(min >= 0 && min <= 1))
    throw new InvalidArgumentError(`expected K:MIN:TAG such as 3:0.9:critical, got "${v}"`);
  return [...prior, { k, min, tag: m[3]! }];
};

/** Rules from --rules FILE, overridden by flags. */
const gateRules = async (f: GateFlags): Promise<GateRules> => {
  const file = f.rules ? await readGateRulesFile(f.rules) : {};
  const rules: GateRules = {
    ...file,
    ...(f.zeroForbidden ? { zero_forbidden_actions: true } : {}),
    ...(f.maxPass1Drop === undefined ? {} : { max_pass_at_1_drop: f.maxPass1Drop }),
    ...(f.passHat ? { pass_hat_k: [...(file.pass_hat_k ?? []), ...f.passHat] } : {}),
    ...(f.judgeAgreement === undefined ? {} : { judge_agreement: { min: f.judgeAgreement } }),
  };
  if (rules.judge_agreement && !f.judgments)
    throw new InputError('the judge agreement rule needs --judgments FILE with judgments and human labels', {
      field: '--judgments',
    });
  return rules;
};

export const gateCommand = (program: Command): void => {
  const cmd = program
    .command('gate')
    .description(
      'Decides whether the candidate may roll out, from recorded verdicts only. Always: every must-not-break row\n' +
        'that was stable-correct on the baseline is still stable-correct on the candidate after confirmation, and every\n' +
        'must-not-break row has enough graded attempts to classify. Optional rules: zero forbidden actions, a floor on\n' +
        'the paired lower bound of Δpass@1, pass^k bars on tagged rows, judge agreement. See docs/metrics.md.',
    )
    .argument('[files...]', 'trial files with both versions (confirmation attempts included)')
    .option(
      '--must-not-break <file>',
      'must-not-break row ids, one per line: ROW_ID, SUITE::ROW_ID, or {"suite":…,"row_id":…}',
    )
    .option('--must-not-break-tag <tag>', 'row tag that marks must-not-break rows', MUST_NOT_BREAK_TAG)
    .option('--rules <file>', 'optional rules as JSON (see docs/metrics.md); flags override it')
    .option('--zero-forbidden', 'fail if any candidate trial took a forbidden action')
    .option(
      '--max-pass1-drop <delta>',
      'fail if the paired lower bound of Δpass@1 is below −delta',
      fraction('--max-pass1-drop'),
    )
    .option(
      '--pass-hat <k:min:tag>',
      "fail if the candidate's pass^k on rows tagged TAG is below MIN (repeatable)",
      passHatBar,
    )
    .option(
      '--judge-agreement <min>',
      "fail if any judge's agreement with human labels is below MIN",
      fraction('--judge-agreement'),
    )
    .option('--judgments <file>', 'JudgmentRecorded / LabelRecorded JSON lines for the judge agreement rule')
    .option(
      '--declare',
      'declare the comparison to the live gate (ComparisonDeclared): the processors decide it as the trials arrive',
    )
    .option(
      '--wait <duration>',
      "with --declare: follow passk.decisions until the processors' verdict (exit 0 pass, 1 fail, 5 still undecided)",
      duration,
    )
    .option('--required-attempts <n>', 'with --declare: graded attempts every row needs (default 3)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`a positive integer, got "${v}"`);
      return n;
    })
    .option('--status', 'what declared comparisons wait for: rows short of attempts, confirmation runs not yet run')
    .option('--comparison <id>', 'with --status: only this comparison');
  addCompareOptions(cmd, false)
    .addHelpText(
      'after',
      epilog(`
Examples:
  passk gate --baseline v1 --candidate v2 --must-not-break examples/must-not-break.txt examples/refunds-v1-v2.jsonl
  passk gate --baseline v1 --candidate v2 --zero-forbidden --max-pass1-drop 0.02 --pass-hat 3:0.9:critical examples/refunds-v1-v2.jsonl
  passk gate --baseline v1 --candidate v2 --rules gate.json --judgments judge.jsonl --json trials.jsonl > verdict.json

gate.json, judge.jsonl and trials.jsonl are yours: rules as JSON (docs/metrics.md),
judge verdicts and human labels, and both versions' trials.

Live gate (decided by passk process or passk serve, with confirmation runs):
  passk gate --declare --baseline v1 --candidate v2 --wait 10m
  passk gate --status
  passk gate --from-store --baseline v1 --candidate v2

Exit codes: 0 pass, 1 fail, 2 bad input (file, line and field named), 3 backend unavailable,
  ${EXIT.undecided} --wait ran out with no verdict yet.`),
    )
    .action(async (files: string[], flags: GateFlags, cmd: Command) => {
      const format = outputFormat(flags);
      if (flags.status)
        return runStatus(cmd, { ...(flags.comparison ? { comparison: flags.comparison } : {}), format });
      for (const f of ['baseline', 'candidate'] as const)
        if (!flags[f]) throw new InputError(`--${f} <version> is required`, { field: `--${f}` });
      refuseSameVersion(flags);
      if (flags.wait !== undefined && !flags.declare)
        throw new InputError('--wait goes with --declare', { field: '--wait' });
      const rules = await gateRules(flags);
      const ids = flags.mustNotBreak ? await readMustNotBreakFile(flags.mustNotBreak) : [];
      if (flags.declare) {
        if (files.length > 0 || flags.fromStore)
          throw new InputError('--declare reads no files: the processors decide from the log', { field: '--declare' });
        if (rules.pass_hat_k || rules.judge_agreement)
          throw new InputError(
            'the live gate takes --zero-forbidden and --max-pass1-drop; pass^k bars and judge agreement are for the offline gate',
            { field: '--rules' },
          );
        return runDeclare(
          cmd,
          {
            baseline: flags.baseline,
            candidate: flags.candidate,
            ...(flags.suite?.[0] ? { suite: flags.suite[0] } : {}),
            ...(flags.datasetVersion?.[0] ? { datasetVersion: flags.datasetVersion[0] } : {}),
            mustNotBreak: ids.map((i) => i.row_id),
            rules: {
              ...(rules.zero_forbidden_actions ? { zero_forbidden_actions: true } : {}),
              ...(rules.max_pass_at_1_drop === undefined ? {} : { max_pass_at_1_drop: rules.max_pass_at_1_drop }),
            },
            ...(flags.requiredAttempts ? { requiredAttempts: flags.requiredAttempts } : {}),
          },
          { ...(flags.wait === undefined ? {} : { waitMs: flags.wait }), format },
        );
      }
      const judgeFile = flags.judgments ? await readJudgmentFile(flags.judgments) : undefined;
      const pairs = pairVersions(await loadGroups(files, flags, cmd), flags);
      const verdict = evaluateGate(
        {
          baseline: flags.baseline,
          candidate: flags.candidate,
          pairs: [...pairs.both, ...pairs.oneSided],
          mustNotBreak: { tag: flags.mustNotBreakTag, ids },
          rules,
          ...(judgeFile ? { judges: calibrateJudges(judgeFile.judgments, judgeFile.labels, flags.confidence) } : {}),
        },
        compareOptions(flags),
      );
      // the terminal verdict says it under its first sentence; a JSON or Markdown verdict, read by a script or
      // written to a file, warns the person on stderr instead (once, either way)
      const unprotected = unprotectedLine(verdict.must_not_break);
      if (unprotected && format !== 'table') writeStderr(`passk: warning: ${unprotected}\n`);
      // with --from-store on one suite and dataset version: each version's latest passk run, for the commands in full
      const scopes = pairs.both;
      const known =
        format === 'table' && verdict.verdict === 'fail' && flags.fromStore && scopes.length === 1
          ? {
              suite: scopes[0]!.suite,
              sources: await withReader(cmd, (q) =>
                runSources(q, {
                  suite: scopes[0]!.suite,
                  dataset_version: scopes[0]!.dataset_version,
                  versions: [flags.baseline!, flags.candidate!],
                }),
              ),
            }
          : undefined;
      if (format === 'json') process.stdout.write(renderJson(verdict));
      else
        process.stdout.write(
          format === 'markdown'
            ? renderMarkdown(ruleBlocks(verdict))
            : renderTerminal([...ruleBlocks(verdict), ...gateNext(verdict, sourceArgs(files, flags), known)]),
        );
      process.exitCode = verdict.verdict === 'pass' ? EXIT.ok : EXIT.failed;
    });
};
