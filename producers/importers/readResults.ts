import { readFile } from 'node:fs/promises';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import { parseJson } from './common.ts';
import { isZip, readZip } from './zip.ts';

/**
 * An Inspect `.eval` log (a zip: `header.json`, or `_journal/start.json` while the eval runs, plus one
 * `samples/<id>_epoch_<n>.json` per sample) as the JSON log Inspect writes with `--log-format json`.
 */
export const inspectEvalToJson = (buf: Buffer, file: string): string => {
  let files: Map<string, Buffer>;
  try {
    files = readZip(buf);
  } catch (e) {
    throw new InputError(`not a readable Inspect .eval log: ${(e as Error).message}`, { file });
  }
  const json = (name: string): Record<string, unknown> => {
    const value = parseJson(files.get(name)!.toString('utf8'), `${file}:${name}`);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InputError('not a JSON object', { file: `${file}:${name}` });
    return value as Record<string, unknown>;
  };
  const headerName = files.has('header.json') ? 'header.json' : '_journal/start.json';
  if (!files.has(headerName))
    throw new InputError('not an Inspect .eval log: no header.json or _journal/start.json in the zip', { file });
  const sampleNames = [...files.keys()].filter((n) => /^samples\/.+\.json$/.test(n));
  const samples = sampleNames.map(json).sort((a, b) => {
    const ea = Number(a.epoch ?? 0);
    const eb = Number(b.epoch ?? 0);
    return ea !== eb ? ea - eb : String(a.id).localeCompare(String(b.id), undefined, { numeric: true });
  });
  return JSON.stringify({ ...json(headerName), samples });
};

/**
 * The text of a results file. A zip (Inspect's binary `.eval` log) becomes its JSON log; anything else is read
 * as UTF-8.
 */
export const readResultsText = async (file: string): Promise<string> => {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (e) {
    throw unreadableFile(file, e, 'results file');
  }
  return isZip(buf) ? inspectEvalToJson(buf, file) : buf.toString('utf8');
};
