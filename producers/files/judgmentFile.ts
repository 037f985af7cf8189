import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import { JudgmentRecorded, LabelRecorded } from '../../schemas/events/judgments.ts';
import { parseAt } from './fieldError.ts';

/**
 * `--judgments FILE`: JSON lines of JudgmentRecorded and LabelRecorded events (schemas/events/judgments.ts),
 * told apart by `type`. The envelope (event_id, schema_version, occurred_at, producer) may be left out.
 */
const envelope = { event_id: true, schema_version: true, occurred_at: true, producer: true } as const;
const Line = z.discriminatedUnion('type', [JudgmentRecorded.omit(envelope), LabelRecorded.omit(envelope)]);
type Line = z.output<typeof Line>;

export type JudgmentFile = {
  judgments: Extract<Line, { type: 'JudgmentRecorded' }>[];
  labels: Extract<Line, { type: 'LabelRecorded' }>[];
};

export const parseJudgmentLines = (text: string, file: string): JudgmentFile => {
  const out: JudgmentFile = { judgments: [], labels: [] };
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      if (raw.trim() === '') return;
      const origin = { file, line: i + 1 };
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (e) {
        throw new InputError(`not valid JSON (${(e as Error).message})`, origin);
      }
      const line = parseAt(Line, value, origin, 'judgment or label');
      if (line.type === 'JudgmentRecorded') out.judgments.push(line);
      else out.labels.push(line);
    });
  return out;
};

export const readJudgmentFile = async (file: string): Promise<JudgmentFile> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw unreadableFile(file, e, 'judgments file');
  }
  return parseJudgmentLines(text, file);
};
