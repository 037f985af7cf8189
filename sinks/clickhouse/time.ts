/**
 * DateTime64(3) values travel as "seconds.millis" text, which every `date_time_input_format`
 * parses exactly (a bare integer is read as seconds by some versions and as ticks by others).
 */
export const toDateTime64 = (ms: number): string => {
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`not an epoch-ms timestamp: ${ms}`);
  return `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;
};
