/** ioredis's own slot calculator (CRC16 of the key's hash tag, modulo 16384). */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string): number;
}
