import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { OtlpReceiverOptions } from '../producers/otlp/index.ts';
import type { SamplingPolicyInput } from '../producers/sampler/policy.ts';
import { createSqliteSpool } from '../producers/sampler/spool.ts';
import type { PasskConfig } from './config.ts';

/**
 * The OTLP receiver's options for `passk ingest` and `passk serve`: the policy, the assembly's bounds (config `otlp`),
 * each refusal and eviction written once to stderr with its reason, and, under a capped policy, the spool that keeps
 * its windows durable (`<dataDir>/otlp-spool.sqlite`), so an answered export survives `kill -9`.
 */
export const otlpReceiverOptions = (
  config: PasskConfig,
  policy: SamplingPolicyInput | undefined,
  log: (line: string) => void,
): { options: Omit<OtlpReceiverOptions, 'publisher' | 'onError'>; close: () => void } => {
  let spool: ReturnType<typeof createSqliteSpool> | undefined;
  if (policy?.cap) {
    mkdirSync(config.dataDir, { recursive: true });
    spool = createSqliteSpool(join(config.dataDir, 'otlp-spool.sqlite'));
  }
  return {
    options: {
      ...(policy ? { policy } : {}),
      assembly: config.otlp,
      ...(spool ? { spool } : {}),
      onReject: (r) => log(`OTLP: refused ${r.spans} (${r.reason}): ${r.message}`),
    },
    close: () => spool?.close(),
  };
};
