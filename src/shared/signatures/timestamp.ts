// Up to 15 digits stays an exact integer; a 13-digit millisecond value still parses, so the verdict
// can say "that looks like milliseconds" instead of just "malformed".
const UNIX_SECONDS_PATTERN = /^\d{1,15}$/;
// Past this a "seconds" value is in the year 5000+: almost surely milliseconds sent by mistake.
const LIKELY_MILLISECONDS = 100_000_000_000;

export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Whole epoch seconds as the header wrote them, or undefined for anything else. */
export function parseUnixSeconds(text: string): number | undefined {
  return UNIX_SECONDS_PATTERN.test(text) ? Number(text) : undefined;
}

/**
 * How far outside the tolerance the timestamp falls, signed (positive = too old), or 0 when inside.
 * Whole seconds, like the providers' own libraries, so a boundary case does not flip on a millisecond.
 */
export function measureSkew(timestampSeconds: number, nowMs: number, toleranceSeconds: number): number {
  const ageSeconds = Math.floor(nowMs / 1000) - timestampSeconds;
  if (ageSeconds > toleranceSeconds) return ageSeconds - toleranceSeconds;
  if (ageSeconds < -toleranceSeconds) return ageSeconds + toleranceSeconds;
  return 0;
}

export function describeSkew(
  header: string,
  skewSeconds: number,
  toleranceSeconds: number,
  timestampSeconds: number,
): string {
  const direction = skewSeconds > 0 ? 'older' : 'newer';
  const distance = Math.abs(skewSeconds) + toleranceSeconds;
  const first = `${header} is ${distance} s ${direction} than now, ${Math.abs(skewSeconds)} s past the ${toleranceSeconds} s tolerance.`;
  if (timestampSeconds >= LIKELY_MILLISECONDS) {
    return `${first} It looks like milliseconds, but the sender is meant to write whole seconds.`;
  }
  return skewSeconds > 0
    ? `${first} Either the request was replayed or held up on the way, or one of the two clocks is off.`
    : `${first} The sender's clock or this machine's is off; check that both keep network time.`;
}
