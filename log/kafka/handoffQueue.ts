/**
 * Hands items from kafkajs's callbacks to the one async iterator that reads them. `shift` waits for
 * an item, and returns undefined once the signal aborts (the consumer is closing).
 */
export const createHandoffQueue = <T>(signal: AbortSignal) => {
  const items: T[] = [];
  let wake: (() => void) | undefined;
  signal.addEventListener('abort', () => wake?.(), { once: true });
  return {
    push: (item: T) => {
      items.push(item);
      wake?.();
    },
    shift: async (): Promise<T | undefined> => {
      while (items.length === 0 && !signal.aborted) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      return signal.aborted ? undefined : items.shift();
    },
  };
};
