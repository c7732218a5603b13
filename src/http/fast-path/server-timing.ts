/**
 * Server-Timing (W3C) on every answer: `total` is the time from the first middleware to the
 * answer; `core` the share of the route's handler (the service core over the snapshot) when it ran;
 * `cache;desc=hit` says the answer came from the response cache, which runs no handler.
 * Durations in milliseconds, to the hundredth.
 */
export interface Timing {
  /** performance.now() when the request reached the first middleware. */
  start: number;
  /** Milliseconds spent in the handler, when one ran. */
  core?: number;
}

const ms = (x: number) => Math.round(x * 100) / 100;

export function serverTiming(timing: Timing, hit: boolean): string {
  const total = `total;dur=${ms(performance.now() - timing.start)}`;
  if (hit) return `cache;desc=hit, ${total}`;
  return timing.core === undefined ? total : `core;dur=${ms(timing.core)}, ${total}`;
}
