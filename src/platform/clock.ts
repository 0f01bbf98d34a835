/** Indirection so tests can reason about time without sleeping. */
export const clock = {
  now: (): Date => new Date(),
};
