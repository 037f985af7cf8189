import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';

/**
 * Writes a zip of deflated entries, as Python's zipfile writes Inspect's `.eval` logs, one entry at a time to disk
 * (the central directory, a few bytes per entry, is the only thing kept).
 */
export const writeZip = async (file: string, entries: Iterable<[name: string, text: string]>): Promise<void> => {
  const out = createWriteStream(file);
  const central: Buffer[] = [];
  let offset = 0;
  let count = 0;
  const write = async (b: Buffer) => {
    if (!out.write(b)) await once(out, 'drain');
    offset += b.length;
  };
  for (const [name, text] of entries) {
    const data = Buffer.from(text);
    const packed = deflateRawSync(data);
    const nameBuf = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(crc, 16);
    dir.writeUInt32LE(packed.length, 20);
    dir.writeUInt32LE(data.length, 24);
    dir.writeUInt16LE(nameBuf.length, 28);
    dir.writeUInt32LE(offset, 42);
    central.push(dir, nameBuf);
    count++;
    await write(Buffer.concat([local, nameBuf, packed]));
  }
  const dirBuf = Buffer.concat(central);
  const dirAt = offset;
  await write(dirBuf);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(dirBuf.length, 12);
  end.writeUInt32LE(dirAt, 16);
  out.end(end);
  await once(out, 'finish');
};
