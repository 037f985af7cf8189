import { readFile } from 'node:fs/promises';
import { InputError } from '../../../schemas/errors.ts';
import { exactGrader, regexGrader } from './exact.ts';
import { createFunctionGrader } from './functionGrader.ts';
import { jsonSchemaGrader } from './jsonSchema.ts';
import { type JudgeEndpoint, llmJudge } from './llmJudge.ts';
import type { Grader } from './types.ts';

export * from './types.ts';
export { exactGrader, regexGrader } from './exact.ts';
export { createFunctionGrader } from './functionGrader.ts';
export { jsonSchemaGrader } from './jsonSchema.ts';
export { JudgeFailed, llmJudge, type JudgeEndpoint, type JudgeOptions } from './llmJudge.ts';

export interface GraderChoice {
  /** exact (default), exact-ci, regex, json-schema, judge, or a path to a grader module. */
  readonly grader?: string;
  readonly regexFlags?: string;
  /** json-schema: a schema file for every row (rows may carry their own `expected_schema`). */
  readonly schemaFile?: string;
  /** judge: the endpoint, and the rubric file with its version. */
  readonly judge?: Partial<JudgeEndpoint>;
  readonly rubricFile?: string;
  readonly rubricVersion?: string;
  readonly judgeVersion?: string;
}

const readJsonFile = async (file: string): Promise<Record<string, unknown>> => {
  try {
    const v: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
    return v as Record<string, unknown>;
  } catch (e) {
    throw new InputError(`cannot read a JSON Schema: ${(e as Error).message}`, { file });
  }
};

export const createGrader = async (c: GraderChoice): Promise<Grader> => {
  const kind = c.grader ?? 'exact';
  switch (kind) {
    case 'exact':
      return exactGrader();
    case 'exact-ci':
      return exactGrader({ caseInsensitive: true });
    case 'regex':
      return regexGrader({ ...(c.regexFlags ? { flags: c.regexFlags } : {}) });
    case 'json-schema':
      return jsonSchemaGrader(c.schemaFile ? { schema: await readJsonFile(c.schemaFile) } : {});
    case 'judge': {
      const { baseUrl, model } = c.judge ?? {};
      if (!baseUrl || !model)
        throw new InputError(
          'the judge needs an endpoint and a model (--judge-url and --judge-model, env PASSK_JUDGE_URL and PASSK_JUDGE_MODEL, or judge.url and judge.model in passk.config.json)',
          { field: 'judge' },
        );
      if (!c.rubricFile) throw new InputError('the judge needs a rubric (--rubric FILE)', { field: 'rubric' });
      let rubric: string;
      try {
        rubric = await readFile(c.rubricFile, 'utf8');
      } catch {
        throw new InputError('cannot read the rubric', { file: c.rubricFile });
      }
      return llmJudge({
        endpoint: {
          baseUrl,
          model,
          ...(c.judge?.apiKey ? { apiKey: c.judge.apiKey } : {}),
          ...(c.judge?.timeoutMs ? { timeoutMs: c.judge.timeoutMs } : {}),
        },
        rubric,
        ...(c.rubricVersion ? { rubricVersion: c.rubricVersion } : {}),
        ...(c.judgeVersion ? { judgeVersion: c.judgeVersion } : {}),
      });
    }
    default:
      if (/\.(c|m)?(t|j)sx?$/.test(kind)) return createFunctionGrader(kind);
      throw new InputError(
        `unknown grader "${kind}": exact, exact-ci, regex, json-schema, judge, or a grader module path`,
        { field: 'grader' },
      );
  }
};
