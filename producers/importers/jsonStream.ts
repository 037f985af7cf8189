import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { none } from 'stream-chain/defs.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { InputError, unreadableFile } from '../../schemas/errors.ts';

/**
 * Python's `json.dumps` writes NaN and the infinities as bare tokens JSON does not have; outside strings they become
 * `null`, as `pythonJsonToJson` (common.ts) does for a whole text, here one chunk at a time (a token cut by a
 * chunk's end is held back until the next).
 */
export const createPythonTokenFilter = () => {
  let inString = false;
  let escaped = false;
  let held = '';
  const run = (text: string, last: boolean): string => {
    let out = '';
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (c === 0x22) inString = true;
      else if (c === 0x4e /* N */ || c === 0x49 /* I */ || c === 0x2d /* - */) {
        if (!last && i + 9 > text.length) {
          held = text.slice(i);
          return out + text.slice(from, i);
        }
        const token = /^(?:NaN|-?Infinity)/.exec(text.slice(i, i + 9))?.[0];
        if (token) {
          out += `${text.slice(from, i)}null`;
          i += token.length - 1;
          from = i + 1;
        }
      }
    }
    held = '';
    return out + text.slice(from);
  };
  return {
    push: (chunk: string): string => run(held + chunk, false),
    end: (): string => run(held, true),
  };
};

/** One element of a streamed array: the array's path (keys joined by "."; "" for the root), its index, its value. */
export interface StreamedElement {
  readonly array: string;
  readonly index: number;
  readonly value: unknown;
}

type Frame = {
  readonly container: unknown[] | Record<string, unknown>;
  /** The object-key path of this container, or null inside an array element. */
  readonly path: string | null;
  /** Elements of this array are streamed, not kept (but for the first, kept for detection). */
  readonly streamed: boolean;
  key: string | null;
  index: number;
};

/** What a scan leaves once its elements are read: the document without the streamed arrays' further elements. */
export interface ScanResult {
  /** The document with each streamed array holding only its first element. */
  readonly skeleton: unknown;
  /** Elements of each streamed array. */
  readonly counts: ReadonlyMap<string, number>;
  /** sha256 (hex) of the file's text as UTF-8, as `sha256(text)` gives for the whole text. */
  readonly sha256: string;
}

/**
 * Streams one JSON document from a file: yields each element of the arrays at `streamed` paths (object keys from the
 * root joined by "."; "" is a root array) one at a time, and builds the rest of the document, which `result()` gives
 * once the generator is done. Memory holds the rest of the document and one element at a time, never the file.
 * Python's NaN and infinities read as null (as `parseJson` reads them) unless `python` is false; a BOM is dropped. Broken JSON is an error
 * naming the file and line.
 */
export const scanJson = (
  file: string,
  streamed: ReadonlySet<string>,
  opts: { python?: boolean; onRead?: (bytes: number) => void } = {},
) => {
  const python = opts.python ?? true;
  let result: ScanResult | undefined;
  async function* elements(): AsyncGenerator<StreamedElement> {
    const hash = createHash('sha256');
    const filter = createPythonTokenFilter();
    const parse = jsonParser({ packValues: true, streamValues: false });
    const stack: Frame[] = [];
    const counts = new Map<string, number>();
    let root: unknown = undefined;
    let rootDone = false;
    let line = 1;
    let first = true;
    const ready: StreamedElement[] = [];

    const place = (value: unknown): void => {
      const top = stack[stack.length - 1];
      if (!top) {
        root = value;
        rootDone = true;
        return;
      }
      if (Array.isArray(top.container)) {
        const index = top.index++;
        if (top.streamed) {
          ready.push({ array: top.path!, index, value });
          counts.set(top.path!, index + 1);
          if (index === 0) top.container.push(value);
        } else top.container.push(value);
      } else {
        // as JSON.parse: a "__proto__" key is an own property, the prototype untouched
        if (top.key === '__proto__')
          Object.defineProperty(top.container, top.key, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else top.container[top.key!] = value;
        top.key = null;
      }
    };
    const open = (container: unknown[] | Record<string, unknown>): void => {
      const top = stack[stack.length - 1];
      const path = !top ? '' : Array.isArray(top.container) || top.path === null ? null : pathOf(top.path, top.key!);
      const isArray = Array.isArray(container);
      if (isArray && path !== null && streamed.has(path)) counts.set(path, 0);
      stack.push({ container, path, streamed: isArray && path !== null && streamed.has(path), key: null, index: 0 });
    };
    const close = (): void => {
      const frame = stack.pop()!;
      place(frame.container);
    };
    const consume = (tokens: unknown): void => {
      if (tokens === undefined || tokens === none) return;
      const list = (tokens as { values?: Token[] }).values ?? [tokens as Token];
      for (const t of list) {
        if (rootDone) throw new Error('unexpected text after the JSON document');
        switch (t.name) {
          case 'startObject':
            open({});
            break;
          case 'startArray':
            open([]);
            break;
          case 'endObject':
          case 'endArray':
            close();
            break;
          case 'keyValue':
            stack[stack.length - 1]!.key = t.value;
            break;
          case 'stringValue':
            place(t.value);
            break;
          case 'numberValue':
            place(Number(t.value));
            break;
          case 'nullValue':
            place(null);
            break;
          case 'trueValue':
            place(true);
            break;
          case 'falseValue':
            place(false);
            break;
          default:
            break;
        }
      }
    };
    const feed = (text: string): void => {
      // line by line, so a parse error names its line
      let from = 0;
      for (;;) {
        const nl = text.indexOf('\n', from);
        const piece = nl < 0 ? text.slice(from) : text.slice(from, nl + 1);
        if (piece) {
          try {
            consume(parse(piece));
          } catch (e) {
            throw new InputError(`not valid JSON (${(e as Error).message})`, { file, line });
          }
        }
        if (nl < 0) break;
        line++;
        from = nl + 1;
      }
    };

    const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
    try {
      let counted = 0;
      for await (const chunk of stream as AsyncIterable<string>) {
        opts.onRead?.(stream.bytesRead - counted);
        counted = stream.bytesRead;
        hash.update(chunk, 'utf8');
        let text = chunk;
        if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        first = false;
        feed(python ? filter.push(text) : text);
        if (ready.length > 0) yield* ready.splice(0);
      }
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw unreadableFile(file, e, 'results file');
    } finally {
      stream.destroy();
    }
    if (python) feed(filter.end());
    try {
      consume(parse(none as unknown as string));
    } catch (e) {
      throw new InputError(`not valid JSON (${(e as Error).message})`, { file, line });
    }
    if (!rootDone) throw new InputError('not valid JSON (the document ends before it is complete)', { file, line });
    if (ready.length > 0) yield* ready.splice(0);
    result = { skeleton: root, counts, sha256: hash.digest('hex') };
  }
  return {
    elements,
    /** The scan's result, once `elements()` has been read to its end. */
    result: (): ScanResult => {
      if (!result) throw new Error('scanJson: result() before the elements were read');
      return result;
    },
  };
};

const pathOf = (parent: string, key: string): string => (parent === '' ? key : `${parent}.${key}`);
