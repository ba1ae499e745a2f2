/**
 * Formats epoch milliseconds as ISO 8601 UTC with milliseconds, exactly as
 * `Date.prototype.toISOString` does, for times from 1970 to 9999. It reuses the text up to the
 * seconds while they stay the same: requests arrive many per second, and `toISOString` costs
 * more than the rest of a request's timestamp handling (docs/performance.md has the figures).
 */
export function createUtcTimeFormatter(): (ms: number) => string {
  let second = Number.NaN;
  let prefix = '';
  return (ms) => {
    const thisSecond = Math.floor(ms / 1000);
    if (thisSecond !== second) {
      second = thisSecond;
      // "2026-11-23T11:52:11." — everything before the milliseconds.
      prefix = new Date(thisSecond * 1000).toISOString().slice(0, 20);
    }
    const millis = Math.floor(ms) - thisSecond * 1000;
    return `${prefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  };
}
