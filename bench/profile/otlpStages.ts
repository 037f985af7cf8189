/**
 * Where the OTLP receiver's CPU goes, stage by stage, on the bench's requests (issue #25, docs/performance.md): each
 * line runs the stages before it and one more, in one process, in CPU time (`process.cpuUsage`, so other processes'
 * load mostly cancels), best of `rounds`; the difference between lines is the stage's cost per trace.
 *   node --import tsx bench/profile/otlpStages.ts [traces=10000] [rounds=5]
 * The last line is the whole receiver without HTTP (`receiver.export` on the embedded log, its writer thread
 * included); `npm run bench -- otlp` adds the HTTP server and the 4 exporters' `fetch`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedEventLog } from '../../log/index.ts';
import { fastJsonCodec } from '../../log/fastValidate.ts';
import type { EventPublisher } from '../../processors/ports.ts';
import { createOtlpReceiver, createSpanAssembler, decodeProtobuf } from '../../producers/otlp/index.ts';
import { createTraceSampler } from '../../producers/sampler/sampler.ts';
import { createRecorder } from '../../producers/sdk/recorder.ts';
import { otlpBodies } from '../otlpBodies.ts';

const n = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 5);
const bodies = otlpBodies(n, 100);

/** CPU µs per trace of `run` over every body, best of the rounds (a fresh state each round: no revisions). */
type Run = (body: Uint8Array) => unknown;
const measure = async (name: string, make: () => Run | Promise<Run>): Promise<number> => {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const run = await make();
    const t0 = process.cpuUsage();
    for (const b of bodies) await run(b);
    const d = process.cpuUsage(t0);
    best = Math.min(best, (d.user + d.system) / n);
  }
  console.log(`${best.toFixed(1).padStart(7)} µs  ${name}`);
  return best;
};

const nowhere: EventPublisher = {
  publish: async () => {},
  publishRaw: async () => {},
  publishDeadLetters: async () => 0,
  close: async () => {},
};
const encoding: EventPublisher = {
  ...nowhere,
  publish: async (events, opts) => {
    for (const e of events) await fastJsonCodec.encode(e, opts);
  },
};
const pipeline = (o: { redact: boolean; recorder: 'none' | EventPublisher }) => () => {
  const assembler = createSpanAssembler();
  const recorder =
    o.recorder === 'none'
      ? { recordTrace: async () => '', flush: async () => {} }
      : createRecorder({ publisher: o.recorder, producer: 'bench', maxWaitMs: 5, onError: () => undefined });
  const sampler = createTraceSampler({
    policy: { name: 'otlp', rate: 1 },
    recorder,
    ...(o.redact ? {} : { redactors: [] }),
  });
  return async (body: Uint8Array) => {
    for (const { candidate, revision } of assembler.add(decodeProtobuf(body), Date.now()).candidates)
      sampler.offer({ ...candidate, revision });
    await recorder.flush();
  };
};

await measure('decode (decodeProtobuf)', () => decodeProtobuf);
await measure('+ assembly and the conventions (createSpanAssembler.add)', () => {
  const a = createSpanAssembler();
  return (b) => a.add(decodeProtobuf(b), Date.now());
});
await measure('+ sampler without redaction (fingerprint, content id)', pipeline({ redact: false, recorder: 'none' }));
await measure('+ redaction (default redactors)', pipeline({ redact: true, recorder: 'none' }));
await measure('+ recorder (schema validation, text check)', pipeline({ redact: true, recorder: nowhere }));
await measure('+ encoding (JSON, UTF-8)', pipeline({ redact: true, recorder: encoding }));
for (const appendInThread of [false, true]) {
  const dirs: string[] = [];
  const logs: { close(): Promise<void> }[] = [];
  await measure(
    `+ the embedded log's durable append: receiver.export, no HTTP${appendInThread ? ', writer thread' : ''}`,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'passk-otlp-stages-'));
      dirs.push(dir);
      const log = createEmbeddedEventLog({ dataDir: dir, appendInThread });
      logs.push(log);
      const receiver = createOtlpReceiver({ publisher: log.publisher });
      // the writer thread started (its module loaded, its connection open) before the clock, as in a running server
      await log.publisher.publishDeadLetters([]);
      return (b) => receiver.export(b, 'protobuf');
    },
  );
  for (const l of logs) await l.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
