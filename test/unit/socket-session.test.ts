import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HELLO_TIMEOUT_MS } from '../../src/socket/socket-session.js';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { sessionRig, type SessionRig } from '../helpers/fake-socket.js';

/** Lets the session's queued messages and the memory store's promises settle. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A rig whose store holds every log read until `release` is called. */
function holdingReads(): { rig: SessionRig; release: () => void } {
  let release: (() => void) | undefined;
  const rig = sessionRig({}, (store): Store => ({
    ...store,
    readLog: async (id, afterSeq) => {
      await new Promise<void>((resolve) => (release = resolve));
      return store.readLog(id, afterSeq);
    },
  }));
  return { rig, release: () => release?.() };
}

describe('SocketSession', () => {
  let rig: SessionRig | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
    vi.useRealTimers();
  });

  it('goes hello -> joining -> watching -> closed, and a create is welcomed', async () => {
    rig = sessionRig();
    const { socket, session, text } = rig.open();
    expect(session.stateName).toBe('hello');
    text({ type: 'create' });
    expect(session.stateName).toBe('hello');
    await settle();
    expect(session.stateName).toBe('watching');
    expect(socket.of('welcome')[0]?.created).toBe(true);
    expect(rig.hub.watcherTotal()).toBe(1);
    socket.close(1000);
    expect(session.stateName).toBe('closed');
    expect(rig.hub.watcherTotal()).toBe(0);
  });

  it('closes a socket that says nothing within the hello timeout (4000)', async () => {
    rig = sessionRig();
    const { socket } = rig.open();
    vi.advanceTimersByTime(HELLO_TIMEOUT_MS - 1);
    expect(socket.closeCode).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(socket.closeCode).toBe(4000);
  });

  it('re-arms the hello timer with what was left when a create is refused without closing', async () => {
    rig = sessionRig();
    const { socket, session, text } = rig.open();
    vi.advanceTimersByTime(4000);
    // A live endpoint has no lifetime to choose: refused, and the socket stays open for a corrected create.
    text({ type: 'create', ttlMs: 60_000 });
    await settle();
    expect(socket.of('error')[0]?.error.code).toBe('INVALID_REQUEST');
    expect(session.stateName).toBe('hello');
    vi.advanceTimersByTime(HELLO_TIMEOUT_MS - 4000 - 1);
    expect(socket.closeCode).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(socket.closeCode).toBe(4000);
  });

  it('never cuts a create that is under way with the hello timer', async () => {
    const held = holdingReads();
    rig = held.rig;
    const { socket, session, text } = rig.open();
    text({ type: 'create' });
    await settle();
    expect(session.stateName).toBe('joining');
    vi.advanceTimersByTime(2 * HELLO_TIMEOUT_MS);
    expect(socket.closeCode).toBeUndefined();
    held.release();
    await settle();
    expect(session.stateName).toBe('watching');
  });

  it('leaves no watcher, and no endpoint, when the socket closes while its create reads the store', async () => {
    const held = holdingReads();
    rig = held.rig;
    const { socket, text } = rig.open();
    text({ type: 'create' });
    await settle();
    socket.close(1001);
    held.release();
    await settle();
    expect(rig.hub.watcherTotal()).toBe(0);
    expect(await rig.store.countEndpoints()).toBe(0);
  });

  it('detaches the watcher when the store fails during a join', async () => {
    let failReads = false;
    rig = sessionRig({}, (store): Store => ({
      ...store,
      readLog: (id, afterSeq) =>
        failReads ? Promise.reject(new StoreUnavailableError(new Error('timed out'))) : store.readLog(id, afterSeq),
    }));
    const owner = rig.open();
    owner.text({ type: 'create' });
    await settle();
    const { id, key } = owner.socket.of('welcome')[0]?.endpoint ?? { id: '', key: '' };
    failReads = true;
    const joiner = rig.open();
    joiner.text({ type: 'join', endpointId: id, key });
    await settle();
    expect(joiner.socket.of('error')[0]?.error.code).toBe('STORE_UNAVAILABLE');
    expect(joiner.socket.closeCode).toBe(1013);
    expect(rig.hub.watcherCount(id)).toBe(1);
  });

  it('handles messages in the order sent: a set-response right after create applies to the new endpoint', async () => {
    rig = sessionRig();
    const { socket, text } = rig.open();
    text({ type: 'create' });
    text({ type: 'set-response', response: { status: 418 } });
    await settle();
    expect(socket.of('error')).toEqual([]);
    expect(socket.of('response')[0]?.response.status).toBe(418);
  });

  it('charges a message by its parsed type, so a set-response cannot pass as a cheap forwarder report', async () => {
    rig = sessionRig({ liveMessagesPerSecond: 5 });
    const { socket, text } = rig.open();
    text({ type: 'create' });
    await settle();
    for (let i = 0; i < 20; i++) text('{"type":"forwarded","type":"set-response","response":{"status":200}}');
    await settle();
    expect(socket.of('error').map((message) => message.error.code)).toContain('TOO_MANY_MESSAGES');
    expect(socket.closeCode).toBe(4029);
    expect(socket.of('response').length).toBeLessThanOrEqual(10);
  });

  it('answers NOT_JOINED before a create or join, and ALREADY_JOINED after one', async () => {
    rig = sessionRig();
    const { socket, text } = rig.open();
    text({ type: 'clear' });
    await settle();
    text({ type: 'create' });
    text({ type: 'create' });
    await settle();
    expect(socket.of('error').map((message) => [message.error.code, message.for])).toEqual([
      ['NOT_JOINED', 'clear'],
      ['ALREADY_JOINED', 'create'],
    ]);
  });

  it('closes after a run of malformed messages (1008)', async () => {
    rig = sessionRig();
    const { socket, text } = rig.open();
    for (let i = 0; i < 10; i++) text('not json');
    expect(socket.of('error').length).toBe(10);
    expect(socket.closeCode).toBe(1008);
  });
});
