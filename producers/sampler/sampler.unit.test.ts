import { describe, expect, it } from 'vitest';
import { createRng } from '../../processors/core/prng.ts';
import { TraceSampled } from '../../schemas/events/traceSampled.ts';
import type { TraceInput } from '../sdk/inputs.ts';
import { createMemoryPublisher } from '../sdk/memoryPublisher.ts';
import { createRecorder } from '../sdk/recorder.ts';
import { inputFingerprint, normalizeInput } from './fingerprint.ts';
import { withTraceSampling } from './middleware.ts';
import { isNegativeFeedback } from '../../processors/core/failureSignals.ts';
import type { SamplingPolicyInput } from './policy.ts';
import { CLOSED_KEPT_MS, createTraceSampler, type TraceCandidate } from './sampler.ts';

/** A recorder stand-in that keeps what it is given. */
const sink = () => {
  const traces: TraceInput[] = [];
  return { traces, recordTrace: async (t: TraceInput) => (traces.push(t), t.trace_id), flush: async () => {} };
};

type Person = TraceCandidate & { passed: boolean };

/** A fixed production population: three segments with different pass rates, some errors and high-risk tags. */
const population = (n: number, seed: number): Person[] => {
  const rng = createRng(seed);
  const segments = [
    { name: 'free', share: 0.5, pass: 0.92 },
    { name: 'pro', share: 0.33, pass: 0.6 },
    { name: 'enterprise', share: 0.17, pass: 0.25 },
  ];
  return Array.from({ length: n }, (_, i) => {
    const u = rng.next();
    const seg = u < 0.5 ? segments[0]! : u < 0.83 ? segments[1]! : segments[2]!;
    const error = rng.next() < 0.03;
    const passed = !error && rng.next() < seg.pass;
    const risky = seg.name === 'enterprise' && rng.next() < 0.1;
    return {
      trace_id: `t${i}`,
      agent_version: 'v1',
      segment: seg.name,
      input: `request ${i}`,
      passed,
      verdicts: [{ grader: 'g', passed }],
      ...(error ? { error_kind: 'tool_timeout' } : {}),
      ...(risky ? { tags: ['high_risk'] } : {}),
      occurred_at: 1_700_000_000_000 + i * 1_000,
    };
  });
};

/** Hájek estimate of the pass rate (as the sink's query computes it) with its linearized variance under Poisson sampling. */
const hajek = (kept: readonly TraceInput[]) => {
  let w = 0;
  let wy = 0;
  for (const t of kept) {
    w += 1 / t.sampling.probability;
    wy += (t.verdicts![0]!.passed ? 1 : 0) / t.sampling.probability;
  }
  const p = wy / w;
  let v = 0;
  for (const t of kept) {
    const pi = t.sampling.probability;
    const y = t.verdicts![0]!.passed ? 1 : 0;
    v += ((1 - pi) / (pi * pi)) * (y - p) ** 2;
  }
  return { p, se: Math.sqrt(v) / w };
};

const stratified: SamplingPolicyInput = {
  name: 'stratified',
  rate: 0.1,
  segments: { free: 0.04, pro: 0.15, enterprise: 0.5 },
};

describe('trace sampler: statistics', () => {
  const people = population(3_000, 42);
  const truth = people.filter((p) => p.passed).length / people.length;

  it('the weighted (Hájek/Horvitz–Thompson) pass rate under stratified sampling is within its 95% interval in ≥ 93% of 1,000 seeded simulations', async () => {
    let covered = 0;
    let sum = 0;
    const sims = 1_000;
    for (let sim = 0; sim < sims; sim++) {
      const s = sink();
      const sampler = createTraceSampler({ policy: stratified, recorder: s, seed: sim + 1, redactors: [] });
      for (const p of people) sampler.offer(p);
      const { p, se } = hajek(s.traces);
      sum += p;
      if (Math.abs(p - truth) <= 1.96 * se) covered++;
    }
    expect(covered / sims).toBeGreaterThanOrEqual(0.93);
    // unbiased: the mean estimate is within a few standard errors of the mean of the truth
    expect(Math.abs(sum / sims - truth)).toBeLessThan(0.005);
    // and the unweighted share would be badly biased (enterprise is over-sampled and fails more)
    const s = sink();
    const sampler = createTraceSampler({ policy: stratified, recorder: s, seed: 7, redactors: [] });
    for (const p of people) sampler.offer(p);
    const naive = s.traces.filter((t) => t.verdicts![0]!.passed).length / s.traces.length;
    expect(truth - naive).toBeGreaterThan(0.1);
  }, 180_000); // a hang guard: 7 s on a quiet machine, 74 s beside the other tiers at load 25

  it('with a per-window cap (reservoir), probabilities stay exact: the weighted estimate is still unbiased', () => {
    const policy: SamplingPolicyInput = { ...stratified, cap: { max: 5, windowMs: 120_000 } };
    let covered = 0;
    let sum = 0;
    const sims = 500;
    for (let sim = 0; sim < sims; sim++) {
      const s = sink();
      const sampler = createTraceSampler({ policy, recorder: s, seed: 10_000 + sim, redactors: [] });
      for (const p of people) sampler.offer(p);
      void sampler.flush();
      const { p, se } = hajek(s.traces);
      sum += p;
      if (Math.abs(p - truth) <= 1.96 * se) covered++;
    }
    expect(Math.abs(sum / sims - truth)).toBeLessThan(0.01);
    expect(covered / sims).toBeGreaterThanOrEqual(0.93);
  }, 180_000); // a hang guard: 7 s on a quiet machine, 74 s beside the other tiers at load 25
});

describe('trace sampler: rules', () => {
  it('always-keep rules never drop a matching trace, even at rate 0 under a cap of 1', async () => {
    const rng = createRng(3);
    const traces: TraceCandidate[] = Array.from({ length: 5_000 }, (_, i): TraceCandidate => {
      const r = rng.next();
      return {
        trace_id: `t${i}`,
        agent_version: 'v',
        segment: ['a', 'b'][i % 2]!,
        input: 'x',
        occurred_at: i * 10,
        ...(r < 0.1 ? { error_kind: 'crash' } : {}),
        ...(r >= 0.1 && r < 0.2 ? { user_signals: { thumbs: 'down' } as Record<string, string | number> } : {}),
        ...(r >= 0.2 && r < 0.25 ? { user_signals: { rating: 1 } as Record<string, string | number> } : {}),
        ...(r >= 0.25 && r < 0.3 ? { tags: ['vip', 'high_risk'] } : {}),
      };
    });
    const s = sink();
    const sampler = createTraceSampler({ policy: { rate: 0, cap: { max: 1, windowMs: 1_000 } }, recorder: s, seed: 1 });
    const matching = traces.filter((t) => t.error_kind || t.user_signals || t.tags);
    for (const t of traces) {
      const d = sampler.offer(t);
      if (t.error_kind || t.user_signals || t.tags) expect(d).toMatchObject({ kept: true, probability: 1 });
    }
    await sampler.flush();
    expect(new Set(s.traces.map((t) => t.trace_id))).toEqual(new Set(matching.map((t) => t.trace_id)));
    expect(s.traces.every((t) => t.sampling.probability === 1)).toBe(true);
  });

  it('a trace sent again after its capped window closed is not counted again (weights add up to the candidates)', async () => {
    // the OTLP receiver's case: an export answered too late for its client (a timeout) is sent again, same body
    let now = 0;
    const s = sink();
    const sampler = createTraceSampler({
      policy: {
        rate: 1,
        cap: { max: 1, windowMs: 1_000 },
        alwaysKeep: { errors: false, negativeFeedback: false, tags: [] },
      },
      recorder: s,
      seed: 5,
      clock: () => now,
    });
    const offer = (id: string) => sampler.offer({ trace_id: id, agent_version: 'v', input: id, occurred_at: 100 });
    offer('a');
    offer('b');
    now = 1_500;
    sampler.tick(); // the window [0, 1000) closes: one of a, b kept with probability 1/2
    expect(offer('a')).toMatchObject({ kept: 'pending' }); // sent again: counted in the closed window already
    offer('c'); // a late candidate of the same window: counted (once) in a window of its own
    await sampler.flush();
    const weight = s.traces.reduce((sum, t) => sum + 1 / t.sampling.probability, 0);
    expect(weight).toBe(3); // a, b and c: 3 candidates, not 4
    // long after (past CLOSED_KEPT_MS) the closed window's ids are forgotten: memory stays bounded
    now = 1_000 + CLOSED_KEPT_MS;
    sampler.tick();
    expect(offer('a')).toMatchObject({ kept: 'pending' });
    await sampler.flush();
    expect(s.traces.reduce((sum, t) => sum + 1 / t.sampling.probability, 0)).toBe(4);
  });

  it('a cap keeps at most `max` per segment and window, each with probability rate × max / candidates', async () => {
    const s = sink();
    const sampler = createTraceSampler({
      policy: {
        rate: 1,
        cap: { max: 3, windowMs: 60_000 },
        alwaysKeep: { errors: false, negativeFeedback: false, tags: [] },
      },
      recorder: s,
      seed: 9,
    });
    for (let i = 0; i < 100; i++)
      expect(
        sampler.offer({
          trace_id: `t${i}`,
          agent_version: 'v',
          segment: i < 40 ? 'a' : 'b',
          input: i,
          occurred_at: (i % 50) * 1_000 + (i >= 50 ? 60_000 : 0),
        }),
      ).toMatchObject({ kept: 'pending' });
    await sampler.flush();
    const byWindow = new Map<string, TraceInput[]>();
    for (const t of s.traces) {
      const k = `${t.segment}/${Math.floor(t.occurred_at! / 60_000)}`;
      byWindow.set(k, [...(byWindow.get(k) ?? []), t]);
    }
    // candidates: a/w0 = 40; b/w0 = 10 (i 40..49); b/w1 = 50 (i 50..99)
    expect(Object.fromEntries([...byWindow].map(([k, v]) => [k, [v.length, v[0]!.sampling.probability]]))).toEqual({
      'a/0': [3, 3 / 40],
      'b/0': [3, 3 / 10],
      'b/1': [3, 3 / 50],
    });
  });

  it('reads negative feedback from common signal shapes', () => {
    const negative: Record<string, string | number | boolean>[] = [
      { thumbs: 'down' },
      { thumbs_down: true },
      { rating: 1 },
      { stars: 2 },
      { helpful: false },
      { feedback: 'negative' },
    ];
    const fine: Record<string, string | number | boolean>[] = [
      { thumbs: 'up' },
      { rating: 5 },
      { helpful: true },
      { thumbs_down: false },
      {},
    ];
    expect(negative.map((s) => isNegativeFeedback(s))).toEqual(negative.map(() => true));
    expect(fine.map((s) => isNegativeFeedback(s))).toEqual(fine.map(() => false));
  });

  it('redacts before recording, fingerprints the normalized redacted input, and writes valid TraceSampled events', async () => {
    const publisher = createMemoryPublisher();
    const recorder = createRecorder({ publisher });
    const sampler = createTraceSampler({ policy: { rate: 1 }, recorder, seed: 1 });
    sampler.offer({
      trace_id: 'a',
      agent_version: 'v',
      input: 'Refund please, I am  jane@example.com',
      output: 'Sure, call 555-123-4567',
      user_signals: { comment: 'card 4111 1111 1111 1111' },
    });
    sampler.offer({ trace_id: 'b', agent_version: 'v', input: ' refund please, i am bob@example.org ' });
    await sampler.flush();
    const [a, b] = publisher.events.map((e) => TraceSampled.parse(e));
    expect(a!.payload).toEqual({ input: 'Refund please, I am  [EMAIL]', output: 'Sure, call [PHONE]' });
    expect(a!.user_signals).toEqual({ comment: 'card [CARD]' });
    expect(a!.input_fingerprint).toBe(b!.input_fingerprint);
    expect(a!.sampling).toMatchObject({ probability: 1, policy: expect.stringMatching(/^default@/) });
    expect(JSON.stringify(publisher.events)).not.toMatch(/jane@|bob@|4111|555-123/);
  });

  it('normalizes inputs: case, whitespace, Unicode width and JSON key order do not change the fingerprint', () => {
    expect(normalizeInput('  Hello\n\tWORLD ')).toBe('hello world');
    expect(inputFingerprint({ b: 1, a: 'X' })).toBe(inputFingerprint('{"a":"x","b":1}'));
    expect(inputFingerprint('ＡＢＣ')).toBe(inputFingerprint('abc'));
    expect(inputFingerprint('abc')).not.toBe(inputFingerprint('abd'));
  });

  it('middleware: offers every call, records errors with their kind, and returns the result unchanged', async () => {
    const s = sink();
    const sampler = createTraceSampler({ policy: { rate: 1 }, recorder: s, seed: 1 });
    const agent = withTraceSampling(
      async (q: { text: string; tier: string }) => {
        if (q.text === 'boom') throw Object.assign(new Error('x'), { kind: 'tool_failed' });
        return q.text.toUpperCase();
      },
      {
        sampler,
        agentVersion: 'v9',
        segmentOf: (q) => q.tier,
        traceIdOf: (q) => `id-${q.text}`,
        grade: (_q, out) => [{ grader: 'len', passed: out.length < 10 }],
      },
    );
    expect(await agent({ text: 'hi', tier: 'pro' })).toBe('HI');
    await expect(agent({ text: 'boom', tier: 'free' })).rejects.toThrow('x');
    await sampler.flush();
    expect(
      s.traces.map((t) => [
        t.trace_id,
        t.segment,
        t.error_kind ?? null,
        t.verdicts?.[0]?.passed ?? null,
        t.sampling.probability,
      ]),
    ).toEqual([
      ['id-hi', 'pro', null, true, 1],
      ['id-boom', 'free', 'tool_failed', null, 1],
    ]);
  });
});

describe('traces without an input, and later revisions', () => {
  it('fingerprints a missing input per trace, never as one shared value', () => {
    const s = sink();
    const sampler = createTraceSampler({ policy: { name: 'all', rate: 1 }, recorder: s, seed: 1 });
    for (const id of ['a', 'b']) sampler.offer({ trace_id: id, agent_version: 'v1' });
    sampler.offer({ trace_id: 'c', agent_version: 'v1', input: null });
    const fps = s.traces.map((t) => t.input_fingerprint);
    expect(new Set(fps).size).toBe(3);
    expect(fps).not.toContain(inputFingerprint(null));
    expect(s.traces.every((t) => t.payload?.input === undefined)).toBe(true);
  });

  it('gives two different records of one trace two event ids, and the same record one', () => {
    const s = sink();
    const sampler = createTraceSampler({ policy: { name: 'all', rate: 1 }, recorder: s, seed: 1 });
    const base = { trace_id: 't', agent_version: 'v1', input: 'q', occurred_at: 1_000 };
    sampler.offer({ ...base, revision: 0 });
    sampler.offer({ ...base, revision: 0 });
    sampler.record({ ...base, output: 'a', user_id: 'mail me: jane@example.com', revision: 1 }, 1);
    const ids = s.traces.map((t) => t.event_id);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(s.traces[2]).toMatchObject({ revision: 1, user_id: 'mail me: [EMAIL]', sampling: { probability: 1 } });
  });
});
