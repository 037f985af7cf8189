/**
 * Partition of a key: `toPositive(murmur2(utf8(key))) % partitions`, the Java client's (and
 * kafkajs's `DefaultPartitioner`'s) rule for keyed records. Both adapters use this one function, so
 * a key lands in the same partition number on the embedded log and on Kafka, and it never depends
 * on the process or the run.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const encoder = new TextEncoder();

/** Kafka's murmur2 (`org.apache.kafka.common.utils.Utils.murmur2`), in 32-bit integer arithmetic. */
export const murmur2 = (data: Uint8Array, length: number = data.length): number => {
  let h = SEED ^ length;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & ~3;
  switch (length % 4) {
    case 3:
      h ^= data[tail + 2]! << 16;
    // falls through
    case 2:
      h ^= data[tail + 1]! << 8;
    // falls through
    case 1:
      h ^= data[tail]!;
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
};

export const partitionOf = (key: string, partitions: number): number => {
  if (!Number.isInteger(partitions) || partitions < 1)
    throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  return (murmur2(scratch, utf8Into(key)) & 0x7fffffff) % partitions;
};

/**
 * A key's UTF-8 bytes written into one reused buffer (grown when a key needs more): `encode` allocated an array
 * per key, 7% of a restore's time, which partitions every changelog record (bench/restore.ts).
 */
let scratch = new Uint8Array(256);
const utf8Into = (key: string): number => {
  if (key.length * 3 > scratch.length) scratch = new Uint8Array(key.length * 3);
  return encoder.encodeInto(key, scratch).written;
};
