import { open, readFile, stat } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import { InputError, unreadableFile } from '../../schemas/errors.ts';
import { parseJson } from './common.ts';
import { isZip, readZip, ZipTooLarge } from './zip.ts';

/**
 * Heap bytes a JSON results document may take per byte of its text while it is parsed and mapped: the text (twice
 * when it is rewritten from Python's NaN tokens), the parsed value and the trials made from it. Measured on τ-bench
 * files (docs/producers.md, "Large imports"): 3.5 to 4.6 heap bytes per byte of JSON once parsed and mapped, more
 * while JSON.parse runs (a 99 MB file runs a 256 MiB heap out of memory); 16 leaves room for that and the rest.
 */
const HEAP_PER_DOCUMENT_BYTE = 16;

/**
 * The largest JSON text read whole: 1/16 of this process's V8 heap limit, so reading one can never run the heap out
 * of memory (about 256 MiB under Node's default 4 GiB heap; 4 MiB with `--max-old-space-size=64`). `passk import`
 * and `report` stream other tools' files (toolStream.ts) and hold only one `.eval` entry to it; `readResultsText`
 * below, the whole-document reader they replaced, is kept as the reference the tests compare the streamed readers to.
 */
export const maxDocumentBytes = (): number => Math.floor(getHeapStatistics().heap_size_limit / HEAP_PER_DOCUMENT_BYTE);

const MIB = 1024 * 1024;
const tooLarge = (file: string, bytes: number, limit: number): InputError =>
  new InputError(
    `is ${(bytes / MIB).toFixed(1)} MiB, over the ${(limit / MIB).toFixed(1)} MiB a JSON results document can be read in ` +
      `with this heap (1/${HEAP_PER_DOCUMENT_BYTE} of it; one JSON document is read whole): give Node more heap ` +
      `(NODE_OPTIONS=--max-old-space-size=MiB), split the file, or convert it to JSON Lines, which is streamed`,
    { file },
  );

/**
 * An Inspect `.eval` log (a zip: `header.json`, or `_journal/start.json` while the eval runs, plus one
 * `samples/<id>_epoch_<n>.json` per sample) as the JSON log Inspect writes with `--log-format json`.
 */
export const inspectEvalToJson = (buf: Buffer, file: string, maxBytes = Infinity): string => {
  let files: Map<string, Buffer>;
  try {
    files = readZip(buf, maxBytes);
  } catch (e) {
    if (e instanceof ZipTooLarge) throw tooLarge(file, e.bytes, maxBytes);
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
 * The text of a results file, read whole. A zip (Inspect's binary `.eval` log) becomes its JSON log; anything else
 * is read as UTF-8. A file (or a zip's unpacked entries) over `maxBytes` is refused before it is read.
 */
export const readResultsText = async (file: string, maxBytes = maxDocumentBytes()): Promise<string> => {
  let buf: Buffer;
  try {
    // a zip is judged by its bytes here, and by what its entries unpack to before they are inflated (readZip)
    const { size } = await stat(file);
    if (size > maxBytes) throw tooLarge(file, size, maxBytes);
    buf = await readFile(file);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw unreadableFile(file, e, 'results file');
  }
  return isZip(buf) ? inspectEvalToJson(buf, file, maxBytes) : buf.toString('utf8');
};

/** The first bytes of a file (fewer when it is shorter), to tell its format without reading it. */
export const readHead = async (file: string, bytes: number): Promise<Buffer> => {
  let handle;
  try {
    handle = await open(file, 'r');
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } catch (e) {
    throw unreadableFile(file, e, 'results file');
  } finally {
    await handle?.close();
  }
};
