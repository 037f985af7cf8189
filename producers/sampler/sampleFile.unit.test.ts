import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../schemas/errors.ts';
import type { TraceSampled } from '../../schemas/events/index.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { createRecorder } from '../sdk/recorder.ts';
import { sampleFile } from './sampleFile.ts';

// Issue #27: `passk sample` dropped unknown fields ("verdict" for "verdicts" turned a failed trace into an unjudged
// one) and its actions and tokens; ids, segments and grader names were stored unredacted; custom patterns came from
// --redact only.
const dir = mkdtempSync(join(tmpdir(), 'passk-sample-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = async (lines: readonly (object | string)[], policy: object = { rate: 1 }) => {
  const file = join(dir, `t${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
  const publisher = createMemoryPublisher();
  const recorder = createRecorder({ publisher });
  try {
    await sampleFile(file, { policy, recorder });
  } finally {
    await recorder.close();
  }
  return { file, events: publisher.events as TraceSampled[] };
};
const refusal = async (p: Promise<unknown>): Promise<InputError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
};
const base = { trace_id: 't1', agent_version: 'v1', input: 'where is my order?' };

describe('passk sample reads a traces file strictly', () => {
  it('refuses an unknown field, naming file, line and field, and writes nothing', async () => {
    const e = await refusal(run([base, { ...base, trace_id: 't2', verdict: [{ grader: 'g', passed: false }] }]));
    expect(e.message).toMatch(/, line 2, field verdict: unknown field "verdict"/);
  });

  it('keeps actions (arguments redacted) and tokens', async () => {
    const { events } = await run([
      {
        ...base,
        actions: [{ tool: 'lookup', arguments: { email: 'jane.doe@example.com', order: 123456789 } }],
        tokens: { input: 812, output: 40 },
      },
    ]);
    expect(events[0]!.actions).toEqual([{ tool: 'lookup', arguments: { email: '[EMAIL]', order: 123456789 } }]);
    expect(events[0]!.tokens).toEqual({ input: 812, output: 40 });
  });

  it('refuses a trace id or agent version holding personal data; redacts segments and grader names', async () => {
    const e = await refusal(run([base, { ...base, trace_id: 'jane.doe@example.com' }]));
    expect(e.message).toMatch(/, line 2, field trace_id: holds personal data \(\[EMAIL\]\)/);
    const { events } = await run([
      {
        ...base,
        segment: 'vip kate@example.com',
        verdicts: [{ grader: 'reviewed by +44 20 7946 0958', passed: false }],
      },
    ]);
    expect(events[0]!.segment).toBe('vip [EMAIL]');
    expect(events[0]!.verdicts![0]!.grader).toBe('reviewed by [PHONE]');
  });

  it('applies the policy file’s own redaction patterns', async () => {
    const { events } = await run([{ ...base, input: 'ticket TCK-123456 please' }], {
      rate: 1,
      redact: { ticket: 'TCK-\\d{6}' },
    });
    expect(events[0]!.payload!.input).toBe('ticket [TICKET] please');
  });

  it('refuses a file that is not UTF-8, naming the line and the byte', async () => {
    const file = join(dir, 'latin1.jsonl');
    writeFileSync(
      file,
      Buffer.concat([Buffer.from(`${JSON.stringify(base)}\n{"trace_id": "caf`), Buffer.from([0xe9, 0x22, 0x7d])]),
    );
    const recorder = createRecorder({ publisher: createMemoryPublisher() });
    const e = await refusal(sampleFile(file, { policy: { rate: 1 }, recorder }));
    expect(e.message).toBe(
      `${file}, line 2: not valid UTF-8: byte 0xe9 at byte 18 of the line; save the file as UTF-8`,
    );
    await recorder.close();
  });
});
