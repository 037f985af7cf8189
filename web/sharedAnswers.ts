import type { DashboardData } from './data.ts';

export type SharedAnswersOptions = {
  /** Answers kept (least recently used dropped first). @default 64 */
  maxEntries?: number;
};

type Entry = { watermark: string; answer: Promise<unknown> };

/**
 * The dashboard's data with identical questions shared: a call that asks what another call is already asking
 * waits for the same answer (single flight, so ten clients opening the same view run its query once), and an
 * answer is kept until the store's write position (`watermark`) moves, so a view reopened before new events
 * arrive is answered from memory. A failed answer is not kept. The watermark is read once for all the calls that
 * arrive while it is being read.
 */
export const sharedAnswers = (data: DashboardData, opts: SharedAnswersOptions = {}): DashboardData => {
  const max = opts.maxEntries ?? 64;
  const entries = new Map<string, Entry>();
  let reading: Promise<string> | undefined;
  const watermark = (): Promise<string> =>
    (reading ??= data.watermark().finally(() => {
      reading = undefined;
    }));

  const shared =
    <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const key = `${name}\u0000${JSON.stringify(args)}`;
      const mark = await watermark();
      const found = entries.get(key);
      if (found && found.watermark === mark) {
        entries.delete(key); // most recently used last
        entries.set(key, found);
        return found.answer as Promise<R>;
      }
      const answer = call(...args);
      const entry: Entry = { watermark: mark, answer };
      entries.set(key, entry);
      while (entries.size > max) entries.delete(entries.keys().next().value!);
      answer.catch(() => {
        if (entries.get(key) === entry) entries.delete(key);
      });
      return answer;
    };

  return {
    watermark,
    groups: shared('groups', () => data.groups()),
    overview: shared('overview', (scope) => data.overview(scope)),
    compare: shared('compare', (q) => data.compare(q)),
    row: shared('row', (q) => data.row(q)),
    rows: shared('rows', (q) => data.rows(q)),
    gates: shared('gates', (q) => data.gates(q)),
    production: shared('production', () => data.production()),
    trace: shared('trace', (q) => data.trace(q)),
    traces: shared('traces', (q) => data.traces(q)),
    judges: shared('judges', () => data.judges()),
    datasets: shared('datasets', () => data.datasets()),
    deadLetters: shared('deadLetters', () => data.deadLetters()),
  };
};
