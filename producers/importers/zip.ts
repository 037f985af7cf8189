import { inflateRawSync } from 'node:zlib';

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
