import { isIPv6 } from 'node:net';

/**
 * The key per-address limits count by: an IPv4 address as is, an IPv6 address by its /64
 * (one host usually holds a whole /64, so counting single IPv6 addresses would bound nothing).
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as the IPv4 address.
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined) return '';
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  return [...left, ...Array.from({ length: Math.max(0, missing) }, () => '0'), ...right].map((group) =>
    group.toLowerCase().replace(/^0+(?=.)/, ''),
  );
}

/** Counts open things (connections, sockets) per address key, up to a cap per key. */
export class PerAddressCount {
  private readonly counts = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Counts one more for the key; false (and nothing counted) when the key is at the cap. */
  take(key: string): boolean {
    const count = this.counts.get(key) ?? 0;
    if (count >= this.max) return false;
    this.counts.set(key, count + 1);
    return true;
  }

  give(key: string): void {
    const count = (this.counts.get(key) ?? 1) - 1;
    if (count <= 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }
}
