import { describe, expect, it } from 'vitest';
import type { DashboardData, Scope } from './data.ts';
import { sharedAnswers } from './sharedAnswers.ts';

/** A fake store: counts the questions it is asked, answers when told to, at a write position the test moves. */
const fakeStore = () => {
  const asked: string[] = [];
  const waiting: (() => void)[] = [];
  const store = { mark: 'w1', fail: false, watermarkReads: 0 };
  const later = <T>(name: string, value: () => T): Promise<T> => {
    asked.push(name);
    return new Promise((resolve, reject) =>
      waiting.push(() => (store.fail ? reject(new Error('store down')) : resolve(value()))),
    );
  };
  const data = {
    watermark: async () => {
      store.watermarkReads++;
      return store.mark;
    },
    overview: (scope: Scope) => later(`overview ${scope.suite}`, () => [{ suite: scope.suite, mark: store.mark }]),
    groups: () => later('groups', () => []),
  } as unknown as DashboardData;
  const answerAll = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
    for (const w of waiting.splice(0)) w();
  };
  return { data, asked, store, answerAll };
};

const S1 = { suite: 's1', dataset_version: 'd' };
const S2 = { suite: 's2', dataset_version: 'd' };

describe('sharedAnswers', () => {
  it('asks the store once for ten identical concurrent questions, and once per distinct question', async () => {
    const f = fakeStore();
    const d = sharedAnswers(f.data);
    const calls = [...Array.from({ length: 10 }, () => d.overview(S1)), d.overview(S2)];
    await f.answerAll();
    const answers = await Promise.all(calls);
    expect(f.asked).toEqual(['overview s1', 'overview s2']);
    expect(new Set(answers.slice(0, 10)).size).toBe(1);
    expect(answers[10]).toEqual([{ suite: 's2', mark: 'w1' }]);
    expect(f.store.watermarkReads).toBeLessThanOrEqual(2);
  });

  it('answers from memory until the write position moves, then asks again', async () => {
    const f = fakeStore();
    const d = sharedAnswers(f.data);
    const first = d.overview(S1);
    await f.answerAll();
    await first;
    expect(await d.overview(S1)).toBe(await first);
    expect(f.asked).toHaveLength(1);
    f.store.mark = 'w2';
    const fresh = d.overview(S1);
    await f.answerAll();
    expect(await fresh).toEqual([{ suite: 's1', mark: 'w2' }]);
    expect(f.asked).toHaveLength(2);
  });

  it('keeps no failed answer: the next question asks the store again', async () => {
    const f = fakeStore();
    const d = sharedAnswers(f.data);
    f.store.fail = true;
    const failed = d.overview(S1);
    await f.answerAll();
    await expect(failed).rejects.toThrow('store down');
    f.store.fail = false;
    const retried = d.overview(S1);
    await f.answerAll();
    expect(await retried).toEqual([{ suite: 's1', mark: 'w1' }]);
    expect(f.asked).toHaveLength(2);
  });

  it('keeps at most maxEntries answers, dropping the least recently used', async () => {
    const f = fakeStore();
    const d = sharedAnswers(f.data, { maxEntries: 2 });
    const ask = async (scope: Scope) => {
      const p = d.overview(scope);
      await f.answerAll();
      return p;
    };
    await ask(S1);
    await ask(S2);
    await ask(S1); // S1 is now the most recently used
    await ask({ suite: 's3', dataset_version: 'd' }); // drops S2
    expect(f.asked).toEqual(['overview s1', 'overview s2', 'overview s3']);
    await ask(S1);
    await ask(S2);
    expect(f.asked).toEqual(['overview s1', 'overview s2', 'overview s3', 'overview s2']);
  });
});
