/**
 * A pure fold: replaying the same events in the same order always gives the same state.
 * No I/O, no clock, no randomness: time comes from the events themselves.
 */
export type Fold<S, E> = Readonly<{ initial: () => S; evolve: (state: S, event: E) => S }>;

/** Folds a sequence of events from `from` (default: the initial state). */
export const replay = <S, E>(fold: Fold<S, E>, events: Iterable<E>, from?: S): S => {
  let state = from ?? fold.initial();
  for (const e of events) state = fold.evolve(state, e);
  return state;
};
