import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what the last full collection kept alive, in percent, for `passk serve`
 * (issue #32: serve ≤ 1 GB RSS). V8 picks the factor from the machine's memory: up to 4× on one with 16 GiB or more,
 * so a cold dashboard answer at 2.5M trials, whose own objects die as soon as it is sent, left a heap of 800–980 MiB
 * (≈ 250 MiB of it alive) and an RSS of 1.3–1.7 GiB. At 1.3× the same answers peak at 270–310 MiB of heap. The flag
 * is read at every collection, so it holds when set after Node started; unlike --max-old-space-size it sets no limit
 * (a larger store still gets the heap it needs, at the cost of more frequent collections).
 */
export const SERVE_HEAP_GROWING_PERCENT = 30;

/** Sets V8's heap growing factor for this process (see SERVE_HEAP_GROWING_PERCENT). */
export const boundHeapGrowth = (percent: number = SERVE_HEAP_GROWING_PERCENT): void => {
  if (!Number.isInteger(percent) || percent <= 0) throw new RangeError(`not a percent: ${percent}`);
  setFlagsFromString(`--heap-growing-percent=${percent}`);
};
