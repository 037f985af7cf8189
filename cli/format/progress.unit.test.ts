import { describe, expect, it } from 'vitest';
import { etaText, progressBar, type BarStream } from './progress.ts';

/** A terminal's stderr as cli-progress sees it: everything it draws, escape codes included, in `text`. */
const terminal = () => {
  const t = {
    text: '',
    isTTY: true as const,
    columns: 100,
    write: (s: string | Uint8Array) => ((t.text += String(s)), true),
  };
  return t;
};
const at = (total: number, skipped: number, done: number, passed = done) => ({
  total,
  skipped,
  done,
  passed,
  failed: 0,
  ungraded: 0,
});
// the text a person sees, without cursor movements and colours
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\u001b(\[[0-9;?]*[A-Za-z]|[78])/g, '');

describe('etaText', () => {
  it("is the run's own pace times what is left, — before the first trial and 0s after the last", () => {
    expect(etaText(0, 0, 10)).toBe('—');
    expect(etaText(5_000, 1, 10)).toBe('45s');
    expect(etaText(60_000, 10, 100)).toBe('9m 00s');
    expect(etaText(3_000_000, 1, 3)).toBe('1h 40m');
    expect(etaText(1_000, 10, 10)).toBe('0s');
  });
});

describe('the run progress bar', () => {
  it('draws nothing for a resume with every attempt recorded (no NULL or INF ETA)', () => {
    const t = terminal();
    const bar = progressBar(t as BarStream);
    bar.update(at(6, 6, 0));
    bar.stop();
    expect(t.text).toBe('');
  });

  it('on a resume counts only the trials left, with an ETA from their pace, and ends its line when done', () => {
    const t = terminal();
    let clock = 0;
    const bar = progressBar(t as BarStream, () => clock);
    bar.update(at(10, 6, 0));
    clock = 2_000;
    bar.update(at(10, 6, 1));
    clock = 8_000;
    bar.update(at(10, 6, 4));
    const seen = plain(t.text);
    expect(seen).toContain('0/4 trials');
    expect(seen).toContain('4/4 trials | pass 4 fail 0 ungraded 0 | ETA 0s');
    expect(seen).not.toMatch(/NULL|INF|LLs/);
    expect(t.text.endsWith('\n')).toBe(true);
  });

  it('in follow mode, a status line written between two runs stays on its own line', () => {
    const t = terminal();
    const bar = progressBar(t as BarStream, () => 0);
    bar.update(at(2, 0, 0));
    bar.update(at(2, 0, 1));
    bar.update(at(2, 0, 2));
    // the finished run's bar has ended its line (stopped: no redraw can come back to it, nor to a row scrolled under it)
    expect(t.text.endsWith('\n')).toBe(true);
    t.write('passk: following confirmation requests for v2 until SIGTERM\n');
    const afterStatus = t.text.length;
    bar.update(at(3, 0, 0));
    bar.update(at(3, 0, 3));
    bar.stop();
    // the second run draws after the status line: it never moves the cursor up, nor restores a position saved before it
    const tail = t.text.slice(afterStatus);
    // eslint-disable-next-line no-control-regex
    expect(tail).not.toMatch(/\u001b\[\d*[AF]/);
    const restore = tail.indexOf('\u001b8');
    if (restore >= 0) expect(tail.slice(0, restore)).toContain('\u001b7');
    expect(plain(t.text)).toContain('passk: following confirmation requests for v2 until SIGTERM\n');
    expect(plain(t.text.slice(afterStatus))).toContain('3/3 trials');
  });
});
