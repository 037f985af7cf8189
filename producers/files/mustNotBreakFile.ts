import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import type { MustNotBreakId } from '../../processors/core/mustNotBreak.ts';
import { parseAt } from './fieldError.ts';

/**
 * `--must-not-break FILE`: one row id per line. Blank lines and lines starting with `#` are skipped.
 *   42                      row 42 in every suite that has it
 *   airline::42             row 42 of suite airline only (split at the first "::")
 *   {"suite": "a::b", "row_id": "x"}   a JSON object, for ids that contain "::" or start with "{" or "#"
 * Surrounding whitespace is trimmed.
 */
const JsonId = z
  .object({ suite: z.string().min(1).optional(), row_id: z.union([z.string().min(1), z.number()]).transform(String) })
  .strict();

export const parseMustNotBreakList = (text: string, file: string): MustNotBreakId[] =>
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .flatMap((raw, i) => {
      const line = raw.trim();
      const origin = { file, line: i + 1 };
      if (line === '' || line.startsWith('#')) return [];
      if (line.startsWith('{')) {
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch (e) {
          throw new InputError(`not valid JSON (${(e as Error).message})`, origin);
        }
        const id = parseAt(JsonId, value, origin, 'must-not-break id');
        return [id.suite === undefined ? { row_id: id.row_id } : { suite: id.suite, row_id: id.row_id }];
      }
      const at = line.indexOf('::');
      if (at < 0) return [{ row_id: line }];
      const suite = line.slice(0, at).trim();
      const row_id = line.slice(at + 2).trim();
      if (!suite || !row_id)
        throw new InputError('expected SUITE::ROW_ID with both parts non-empty', {
          ...origin,
          field: suite ? 'row_id' : 'suite',
        });
      return [{ suite, row_id }];
    });

export const readMustNotBreakFile = async (file: string): Promise<MustNotBreakId[]> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw unreadableFile(file, e, 'must-not-break file');
  }
  return parseMustNotBreakList(text, file);
};
