import { asyncScheduler, exhaustMap, filter, firstValueFrom, interval, map, race, type SchedulerLike } from 'rxjs';
import type { EventConsumer } from '../ports.ts';
import type { InFlight } from './inFlight.ts';
import { stopped$ } from './onStop.ts';

/**
 * Resolves once nothing is in flight and the group's lag is zero on every partition: everything
 * consumed is durable and committed (`passk process --until-caught-up`). Also resolves when `stop` does.
 */
export const stopWhenCaughtUp = (
  consumer: Pick<EventConsumer, 'lag'>,
  inFlight: InFlight,
  opts: { everyMs: number; stop: Promise<unknown>; scheduler?: SchedulerLike },
): Promise<unknown> =>
  firstValueFrom(
    race(
      stopped$(opts.stop),
      interval(opts.everyMs, opts.scheduler ?? asyncScheduler).pipe(
        filter(() => inFlight.count === 0),
        exhaustMap(() => consumer.lag()),
        filter((lags) => inFlight.count === 0 && lags.every((l) => l.lag === 0)),
        map(() => 'caught-up' as const),
      ),
    ),
  );
