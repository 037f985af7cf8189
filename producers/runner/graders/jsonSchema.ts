import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';
import { InputError } from '../../../schemas/errors.ts';
import { contentHash } from '../../importers/common.ts';
import type { Grader } from './types.ts';

/**
 * The output, parsed as JSON, is valid against a JSON Schema: the row's `expected_schema`, else the
 * one given for the whole dataset. Validated by Ajv (draft-07 / 2019 keywords, all errors collected).
 */
export const jsonSchemaGrader = (opts: { schema?: Record<string, unknown> } = {}): Grader => {
  // ajv is loaded when a JSON Schema grader is made, not when `passk run` starts: the other graders do not need it
  // (its CommonJS entry, which is also what `import 'ajv'` resolves to)
  const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass };
  const ajv = new Ajv({ allErrors: true, strict: false });
  const compiled = new Map<string, ValidateFunction>();
  const validatorFor = (schema: Record<string, unknown>): ValidateFunction => {
    const key = contentHash(schema);
    let v = compiled.get(key);
    if (!v) compiled.set(key, (v = ajv.compile(schema)));
    return v;
  };
  const schemaOf = (row: { expected_schema?: Record<string, unknown> }) => row.expected_schema ?? opts.schema;
  return {
    spec: { kind: 'json_schema', id: opts.schema ? `schema-${contentHash(opts.schema)}` : 'row-schema', version: '1' },
    check(row) {
      const schema = schemaOf(row);
      if (!schema)
        throw new InputError(`row ${row.id} has no "expected_schema" and no --schema was given`, {
          field: 'expected_schema',
        });
      try {
        validatorFor(schema);
      } catch (e) {
        throw new InputError(`row ${row.id}: invalid JSON Schema: ${(e as Error).message}`, {
          field: 'expected_schema',
        });
      }
    },
    async grade({ row, value }) {
      let data: unknown = value;
      if (typeof value === 'string')
        try {
          data = JSON.parse(value);
        } catch {
          return { passed: false, score: 0 };
        }
      const passed = validatorFor(schemaOf(row)!)(data);
      return { passed, score: passed ? 1 : 0 };
    },
  };
};
