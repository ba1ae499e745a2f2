import { describe, expect, it } from 'vitest';
import type { Writable } from 'node:stream';
import * as ws from 'ws';
import { textFrame } from '../../src/socket/frame.js';

// ws's frame parser: exported at runtime, though @types/ws does not declare it.
const Receiver = (ws as unknown as { Receiver: new (options: object) => Writable }).Receiver;

/** Feeds bytes to ws's own client-side parser and returns the messages it decodes. */
function decode(bytes: Buffer): Promise<Array<{ text: string; isBinary: boolean }>> {
  const receiver = new Receiver({ isServer: false, maxPayload: 0 });
  const messages: Array<{ text: string; isBinary: boolean }> = [];
  receiver.on('message', (data: Buffer, isBinary: boolean) => messages.push({ text: data.toString(), isBinary }));
  return new Promise((resolve, reject) => {
    receiver.on('error', reject);
    receiver.write(bytes, () => resolve(messages));
  });
}

describe('textFrame', () => {
  it('sends a large payload from its own bytes, without copying it', () => {
    const payload = Buffer.alloc(100_000, 0x61);
    expect(textFrame(payload).chunks[1]).toBe(payload);
  });

  // Each length form of RFC 6455: 7-bit, 16-bit and 64-bit, at their edges.
  it.each([0, 1, 125, 126, 65535, 65536, 200_000])(
    'frames %i bytes so a client decodes the same text',
    async (length) => {
      const text = 'é'.repeat(Math.floor(length / 2)) + 'x'.repeat(length % 2);
      const frame = textFrame(text);
      const bytes = Buffer.concat(frame.chunks);
      expect(bytes.length).toBe(frame.length);
      expect(await decode(bytes)).toEqual([{ text, isBinary: false }]);
    },
  );

  it('frames back to back decode as separate messages', async () => {
    const bytes = Buffer.concat(
      [textFrame('{"a":1}'), textFrame(''), textFrame('z'.repeat(300))].flatMap((frame) => frame.chunks),
    );
    expect((await decode(bytes)).map((m) => m.text)).toEqual(['{"a":1}', '', 'z'.repeat(300)]);
  });
});
