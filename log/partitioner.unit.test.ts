import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { murmur2, partitionOf } from './partitioner.ts';

const require = createRequire(import.meta.url);
// kafkajs's own Java-compatible murmur2 (the DefaultPartitioner's hash), as the reference.
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;

describe('partitionOf', () => {
  it('hashes exactly like kafkajs DefaultPartitioner (Java client murmur2)', () => {
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'abcde',
      'suite\u001frow-17',
      'ünïcødé ✓',
      ...Array.from({ length: 500 }, (_, i) => `key-${i * 7919}`),
    ];
    for (const key of keys) expect(murmur2(Buffer.from(key)), key).toBe(kafkajsMurmur2(Buffer.from(key)));
  });

  it('matches known Java values', () => {
    // org.apache.kafka.common.utils.Utils.murmur2("21".getBytes()) == -973932308 (Kafka's UtilsTest)
    expect(murmur2(Buffer.from('21'))).toBe(-973932308);
  });

  it('is stable and in range', () => {
    for (let i = 0; i < 200; i++) {
      const p = partitionOf(`k${i}`, 4);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(4);
      expect(partitionOf(`k${i}`, 4)).toBe(p);
    }
    expect(() => partitionOf('k', 0)).toThrow(RangeError);
  });
});
