import { PipelineError } from '../../../schemas/errors.ts';
import { sha256 } from '../../importers/common.ts';
import { asText } from '../dataset.ts';
import type { Grader } from './types.ts';

export interface JudgeEndpoint {
  /** An OpenAI-compatible API root, e.g. `http://localhost:8000/v1`: the judge POSTs to `<baseUrl>/chat/completions`. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  /** @default 60000 */
  readonly timeoutMs?: number;
}

export interface JudgeOptions {
  readonly endpoint: JudgeEndpoint;
  /** What a passing answer must do: one clear criterion, defined by observable evidence. */
  readonly rubric: string;
  /** @default `sha-<hash of the rubric>` */
  readonly rubricVersion?: string;
  /** Version of the judge (model + prompt). @default `sha-<hash of model and prompt template>` */
  readonly judgeVersion?: string;
  readonly fetch?: typeof fetch;
}

/** The judge's endpoint failed or answered nonsense: the trial stays ungraded; retriable says whether to try again. */
export class JudgeFailed extends PipelineError {
  constructor(
    readonly kind: string,
    message: string,
    retriable: boolean,
  ) {
    super(message, { retriable });
  }
}

const SYSTEM =
  'You grade one answer of an AI agent against a rubric. Judge only what the rubric asks, from evidence in the answer. ' +
  'Reply with one JSON object and nothing else: {"verdict": "pass" or "fail", "score": a number from 0 to 1, "reason": one sentence}.';

const prompt = (rubric: string, input: string, expected: string | undefined, output: string) =>
  [
    `Rubric:\n${rubric}`,
    `Input:\n${input}`,
    ...(expected === undefined ? [] : [`Reference answer:\n${expected}`]),
    `Answer to grade:\n${output}`,
  ].join('\n\n');

/** The first JSON object in a reply (models wrap JSON in prose or code fences). */
const firstObject = (text: string): Record<string, unknown> | undefined => {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const v: unknown = JSON.parse(text.slice(start, end + 1));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * An LLM judge behind any OpenAI-compatible chat-completions endpoint. Its verdict grades the trial and is
 * also recorded as a JudgmentRecorded (rubric version, judge id and version), so it can be calibrated against
 * human labels. 408/429/5xx and network failures are retried; an unreadable reply leaves the trial ungraded.
 */
export const llmJudge = (opts: JudgeOptions): Grader => {
  const { endpoint } = opts;
  const rubricVersion = opts.rubricVersion ?? `sha-${sha256(opts.rubric).slice(0, 12)}`;
  const judgeVersion = opts.judgeVersion ?? `sha-${sha256(`${endpoint.model}\n${SYSTEM}`).slice(0, 12)}`;
  const doFetch = opts.fetch ?? fetch;
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    spec: { kind: 'llm_judge', id: endpoint.model, version: `${judgeVersion}+rubric.${rubricVersion}` },
    check: () => {},
    async grade({ row, output, trialEventId }) {
      const body = {
        model: endpoint.model,
        temperature: 0,
        messages: [
          { role: 'system', content: SYSTEM },
          {
            role: 'user',
            content: prompt(opts.rubric, asText(row.input) ?? '', asText(row.expected), output ?? '(no output)'),
          },
        ],
      };
      let res: Response;
      let text: string;
      try {
        res = await doFetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(endpoint.timeoutMs ?? 60_000),
        });
        text = await res.text();
      } catch (e) {
        throw new JudgeFailed('judge_unavailable', `the judge at ${url} did not answer: ${(e as Error).message}`, true);
      }
      if (!res.ok) {
        const retriable = res.status === 408 || res.status === 429 || res.status >= 500;
        throw new JudgeFailed(
          `judge_http_${res.status}`,
          `the judge at ${url} answered ${res.status}: ${text.slice(0, 200)}`,
          retriable,
        );
      }
      const content = (firstObject(text) as { choices?: { message?: { content?: unknown } }[] } | undefined)
        ?.choices?.[0]?.message?.content;
      const verdict = typeof content === 'string' ? firstObject(content) : undefined;
      const label = typeof verdict?.verdict === 'string' ? verdict.verdict.trim().toLowerCase() : undefined;
      if (label !== 'pass' && label !== 'fail')
        throw new JudgeFailed(
          'judge_unreadable',
          `the judge's reply has no pass/fail verdict: ${String(content).slice(0, 200)}`,
          false,
        );
      const raw =
        typeof verdict!.score === 'number' && Number.isFinite(verdict!.score)
          ? Math.min(1, Math.max(0, verdict!.score))
          : undefined;
      const score = raw ?? (label === 'pass' ? 1 : 0);
      return {
        passed: label === 'pass',
        score,
        judgment: {
          item_id: trialEventId,
          judge: { id: endpoint.model, version: judgeVersion, model: endpoint.model },
          rubric_version: rubricVersion,
          kind: 'pointwise',
          label,
          score,
          ...(output === undefined ? {} : { output_length: output.length }),
        },
      };
    },
  };
};
