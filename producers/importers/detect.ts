import { InputError } from '../../schemas/errors.ts';
import { type ImportOptions, type ParsedFile, parseJson } from './common.ts';
import { looksLikeInspect, parseInspect } from './inspect.ts';
import { looksLikePromptfoo, parsePromptfoo } from './promptfoo.ts';
import { looksLikeTau2, parseTau2 } from './tau2Bench.ts';
import { looksLikeTauBench, parseTauBench } from './tauBench.ts';

export const FORMATS = ['tau-bench', 'tau2-bench', 'promptfoo', 'inspect', 'csv', 'jsonl'] as const;
export type Format = (typeof FORMATS)[number];

type JsonParser = (text: string, value: unknown, file: string, opts: ImportOptions) => ParsedFile;
const JSON_FORMATS: readonly (readonly [Format, (v: unknown) => boolean, JsonParser])[] = [
  ['tau-bench', looksLikeTauBench, parseTauBench],
  ['tau2-bench', looksLikeTau2, parseTau2],
  ['promptfoo', looksLikePromptfoo, parsePromptfoo],
  ['inspect', looksLikeInspect, parseInspect],
];

/** The formats of one JSON document, by the shape of its value, in the order they are tried. */
export const JSON_FORMAT_LOOKS: readonly (readonly [ToolFormat, (v: unknown) => boolean])[] = [
  ['tau-bench', looksLikeTauBench],
  ['tau2-bench', looksLikeTau2],
  ['promptfoo', looksLikePromptfoo],
  ['inspect', looksLikeInspect],
];

/** The format of a file: by `--format`, else by extension (.csv, .jsonl/.ndjson, Inspect's .eval), else by the shape of its JSON. */
export const detectFormat = (file: string, text: string, forced?: Format): Format => {
  if (forced) return forced;
  if (/\.csv$/i.test(file)) return 'csv';
  if (/\.(jsonl|ndjson)$/i.test(file)) return 'jsonl';
  if (/\.eval$/i.test(file)) return 'inspect';
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('['))
    throw new InputError('not JSON, JSONL or CSV: pass --format', { file });
  if (looksLikeJsonLines(text)) return 'jsonl';
  const value = parseJson(text, file);
  const match = JSON_FORMATS.find(([, looks]) => looks(value));
  if (!match)
    throw new InputError(`unrecognized results file (expected one of ${FORMATS.join(', ')}): pass --format`, { file });
  return match[0];
};

/**
 * A JSON Lines file also starts with "{": one object per line, more than one line. Judged from the text's start
 * (its first two lines), so the first bytes of a file suffice.
 */
export const looksLikeJsonLines = (text: string): boolean => {
  const trimmed = text.trimStart();
  const firstLine = trimmed.split('\n', 1)[0]!;
  return trimmed.startsWith('{') && trimmed.includes('\n{') && safeParse(firstLine) !== undefined;
};

const safeParse = (s: string): unknown => {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
};

export type ToolFormat = Exclude<Format, 'jsonl' | 'csv'>;

/** Parses another tool's results file. (Flat JSONL and CSV go to the flat-trial readers of producers/files.) */
export const parseResultsFile = (file: string, text: string, format: ToolFormat, opts: ImportOptions): ParsedFile => {
  const parser = JSON_FORMATS.find(([f]) => f === format)![2];
  return parser(text, parseJson(text, file), file, opts);
};
