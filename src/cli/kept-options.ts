// What `create` and `extend` take for a kept endpoint: a lifetime (`2h`, `1d`, `7d`) and a name.
import { UsageError } from './command.js';

const LIFETIME_UNIT_MS: Record<string, number> = {
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};
/** Past this the number means nothing to any server (KEPT_MAX_TTL_MS is a week by default): refused here, in words. */
const LIFETIME_MAX_MS = 365 * 86_400_000;

/** `90m`, `2h`, `1d`, `7d` (or `7 days`), in milliseconds; the server caps it at its KEPT_MAX_TTL_MS. */
export function parseLifetime(text: string, flag = '--lifetime'): number {
  const match = /^(\d{1,6})\s*(m|min|h|d|days?)$/i.exec(text.trim());
  const ms = match ? Number(match[1]) * (LIFETIME_UNIT_MS[(match[2] as string).toLowerCase()] as number) : Number.NaN;
  if (!(ms >= 60_000 && ms <= LIFETIME_MAX_MS))
    throw new UsageError(
      `${flag} takes a lifetime of at least a minute such as 90m, 2h, 1d or 7d (the server allows up to its KEPT_MAX_TTL_MS, a week by default)`,
    );
  return ms;
}

/**
 * A kept endpoint's name as the server takes it: lower case (`Stripe-Dev` is `stripe-dev`), 3-64
 * letters, digits and dashes, starting with a letter. A name that cannot be one is refused in words.
 */
export function parseEndpointName(text: string): string {
  const name = text.trim().toLowerCase();
  if (!/^[a-z][a-z0-9-]{2,63}$/.test(name)) {
    throw new UsageError(
      '--name takes 3 to 64 letters, digits and dashes, starting with a letter, e.g. stripe-dev (upper case is taken as lower case)',
    );
  }
  return name;
}
