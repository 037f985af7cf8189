import cliProgress from 'cli-progress';
import type { RunProgress } from '../../producers/runner/index.ts';
import { progressBarSize } from './render.ts';

/** Where the bar draws: a terminal's stderr (what cli-progress writes to). */
export type BarStream = Pick<NodeJS.WriteStream, 'write' | 'isTTY' | 'columns'>;

const clock = (s: number): string =>
  s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
      : `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;

/**
 * Time left in this run, from its own pace: the trials this run did (never the attempts a resume skipped) over the time
 * it took. `—` until the first one is done; `0s` once all are.
 */
export const etaText = (elapsedMs: number, done: number, todo: number): string => {
  if (done >= todo) return '0s';
  if (done <= 0 || elapsedMs <= 0) return '—';
  return clock(Math.ceil(((elapsedMs / done) * (todo - done)) / 1000));
};

/**
 * A progress bar with ETA for each run on a terminal; nothing when output is piped or --json. A bar is drawn only for
 * a run with trials to do (a resume with every attempt recorded draws none: there is no ETA to give), and ends with
 * its line as soon as its last trial is done, so what is written next (the follow runner's status lines, the next
 * request's run) starts on a line of its own instead of being drawn over.
 */
export const progressBar = (stream: BarStream | undefined, now: () => number = Date.now) => {
  let bar: cliProgress.SingleBar | null = null;
  let started = 0;
  let todo = 0;
  const stop = () => {
    bar?.stop();
    bar = null;
  };
  const payload = (p: RunProgress) => ({
    passed: p.passed,
    failed: p.failed,
    ungraded: p.ungraded,
    eta_text: etaText(now() - started, p.done, todo),
  });
  return {
    update: (p: RunProgress): void => {
      if (!stream) return;
      if (p.done === 0) {
        // a run begins (a resume, a confirmation request, an adaptive round): a bar of its own, for what is left
        stop();
        todo = p.total - p.skipped;
        if (todo <= 0) return;
        started = now();
        bar = new cliProgress.SingleBar(
          {
            format: ' {bar} {value}/{total} trials | pass {passed} fail {failed} ungraded {ungraded} | ETA {eta_text} ',
            barsize: progressBarSize(58), // room for "720/720 trials | pass 570 fail 150 ungraded 0 | ETA 10s"
            hideCursor: true,
            stream: stream as NodeJS.WriteStream,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(todo, 0, payload(p));
        return;
      }
      if (!bar) return;
      bar.update(p.done, payload(p));
      if (p.done >= todo) stop();
    },
    stop,
  };
};
