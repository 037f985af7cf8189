import { inflateRawSync } from 'node:zlib';
import { open } from 'node:fs/promises';

/** A zip whose entries would unpack to more than the reader allows: checked before anything is inflated. */
export class ZipTooLarge extends Error {
  constructor(readonly bytes: number) {
    super(`unpacks to ${bytes} bytes`);
  }
}

/**
 * The files of a zip archive by name (stored or deflated entries; what Python's `zipfile` writes). With `maxBytes`,
 * an archive whose entries unpack (by the central directory) to more is refused before any is inflated, and no entry
 * inflates past its declared size.
 */
export const readZip = (buf: Buffer, maxBytes = Infinity): Map<string, Buffer> => {
  // The end-of-central-directory record is in the last 65,557 bytes (22 bytes plus a comment of up to 65,535).
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--)
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || at === 0xffffffff) throw new Error('zip64 archives are not supported');
  const files = new Map<string, Buffer>();
  let unpacked = 0;
  for (let n = 0, p = at; n < count && p + 46 <= buf.length; n++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) break; // reported below, in order
    unpacked += buf.readUInt32LE(p + 24);
    p += 46 + buf.readUInt16LE(p + 28) + buf.readUInt16LE(p + 30) + buf.readUInt16LE(p + 32);
  }
  if (unpacked > maxBytes) throw new ZipTooLarge(unpacked);
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`broken central directory at byte ${at}`);
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (buf.readUInt32LE(local) !== 0x04034b50) throw new Error(`broken local header of ${name}`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + compressed);
    if (method === 0) files.set(name, Buffer.from(data));
    else if (method === 8) files.set(name, inflateRawSync(data, { maxOutputLength: Math.max(1, size) }));
    else throw new Error(`${name}: compression method ${method} is not supported (only stored and deflate)`);
  }
  return files;
};

export const isZip = (buf: Buffer): boolean => buf.length >= 4 && buf.readUInt32LE(0) === 0x04034b50;

/** One file of a zip, by its central-directory record. */
export interface ZipEntry {
  readonly name: string;
  readonly method: number;
  readonly compressed: number;
  /** Bytes it unpacks to, as the central directory declares (no entry inflates past it). */
  readonly size: number;
  readonly local: number;
}

/**
 * A zip read from disk one entry at a time: the central directory is read at open, and `read` inflates a single
 * entry, so memory holds one entry, never the archive. An entry declared to unpack to more than `maxEntryBytes` is
 * refused (`ZipTooLarge`) before it is read.
 */
export const openZip = async (file: string, onRead?: (bytes: number) => void) => {
  const handle = await open(file, 'r');
  try {
    const { size: fileSize } = await handle.stat();
    const at = async (position: number, length: number): Promise<Buffer> => {
      const buf = Buffer.alloc(Math.max(0, Math.min(length, fileSize - position)));
      if (buf.length > 0) {
        await handle.read(buf, 0, buf.length, position);
        onRead?.(buf.length);
      }
      return buf;
    };
    const tailStart = Math.max(0, fileSize - 65_557);
    const tail = await at(tailStart, fileSize - tailStart);
    let eocd = -1;
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
    const count = tail.readUInt16LE(eocd + 10);
    const dirAt = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || dirAt === 0xffffffff) throw new Error('zip64 archives are not supported');
    // the central directory runs from its offset to the end record (its declared size is not needed, as in readZip)
    const dir = await at(dirAt, tailStart + eocd - dirAt);
    const entries: ZipEntry[] = [];
    for (let n = 0, p = 0; n < count; n++) {
      if (p + 46 > dir.length || dir.readUInt32LE(p) !== 0x02014b50)
        throw new Error(`broken central directory at byte ${dirAt + p}`);
      const nameLen = dir.readUInt16LE(p + 28);
      entries.push({
        name: dir.toString('utf8', p + 46, p + 46 + nameLen),
        method: dir.readUInt16LE(p + 10),
        compressed: dir.readUInt32LE(p + 20),
        size: dir.readUInt32LE(p + 24),
        local: dir.readUInt32LE(p + 42),
      });
      p += 46 + nameLen + dir.readUInt16LE(p + 30) + dir.readUInt16LE(p + 32);
    }
    const read = async (e: ZipEntry, maxEntryBytes = Infinity): Promise<Buffer> => {
      if (e.size > maxEntryBytes) throw new ZipTooLarge(e.size);
      const header = await at(e.local, 30);
      if (header.length < 30 || header.readUInt32LE(0) !== 0x04034b50)
        throw new Error(`broken local header of ${e.name}`);
      const start = e.local + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
      const data = await at(start, e.compressed);
      if (e.method === 0) return data;
      if (e.method === 8) return inflateRawSync(data, { maxOutputLength: Math.max(1, e.size) });
      throw new Error(`${e.name}: compression method ${e.method} is not supported (only stored and deflate)`);
    };
    return { entries, read, close: () => handle.close() };
  } catch (e) {
    await handle.close();
    throw e;
  }
};
