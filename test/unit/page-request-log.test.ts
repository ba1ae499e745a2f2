import { describe, expect, it } from 'vitest';
import { RequestLog } from '../../client/src/log/request-log.js';
import type { ForwardedMessage } from '../../src/shared/protocol.js';
import { capturedRequest } from '../helpers/captured.js';

const request = (seq: number) => capturedRequest({ seq, url: `/api/webhook-tester/abc/${seq}`, subPath: `/${seq}` });

/** A log keeping `max` requests, with `seqs` arrived live (following the newest). */
function logWith(seqs: number[], max = 50): RequestLog {
  const log = new RequestLog(() => max);
  for (const seq of seqs) log.add(request(seq));
  return log;
}

const seqs = (log: RequestLog) => log.requests.map((held) => held.seq);

const result = (seq: number): ForwardedMessage => ({
  type: 'forwarded',
  seq,
  target: 'http://localhost/hook',
  status: 200,
  durationMs: 1,
  headers: [],
  body: '',
  bodyEncoding: 'utf8',
  bodyTruncated: false,
});

describe('the page: the request log', () => {
  it('holds each seq once, oldest first, whatever order they come in', () => {
    const log = logWith([1, 3]);
    expect(log.add(request(2)).added).toBe(true);
    expect(log.add(request(3))).toEqual({ added: false, live: true, lost: 0 });
    expect(seqs(log)).toEqual([1, 2, 3]);
    expect(log.received).toBe(3);
    expect(log.dropped).toBe(0);
  });

  it('opens the newest match when the filter hides the open request, follows matches only, and keeps a hidden selection when nothing matches', () => {
    const log = logWith([1, 2, 3, 4]);
    log.select(1);
    const even = (held: { seq: number }) => held.seq % 2 === 0;
    log.filter(even);
    expect(log.selectedSeq).toBe(4);
    expect(log.following).toBe(true);
    // A match still open stays open.
    log.select(2);
    log.filter(even);
    expect(log.selectedSeq).toBe(2);
    // Hidden arrivals are neither followed nor news; shown ones are.
    log.select(4);
    log.add(request(5));
    expect(log.selectedSeq).toBe(4);
    log.add(request(6));
    expect(log.selectedSeq).toBe(6);
    log.select(4);
    log.add(request(7));
    log.add(request(8));
    expect(log.unseen).toBe(1);
    // Nothing matches: the selection stays until something does.
    log.filter(() => false);
    expect(log.selectedSeq).toBe(4);
    log.filter(() => true);
    expect(log.selectedSeq).toBe(4);
  });

  it('follows the newest until the reader picks an older one, then counts what arrives as unseen', () => {
    const log = logWith([1, 2]);
    expect(log.following).toBe(true);
    expect(log.selectedSeq).toBe(2);

    log.select(1);
    log.add(request(3));
    log.add(request(4));
    expect(log.following).toBe(false);
    expect(log.selectedSeq).toBe(1);
    expect(log.unseen).toBe(2);

    // Picking the newest follows again and has seen everything.
    log.select(4);
    expect(log.following).toBe(true);
    expect(log.unseen).toBe(0);
    log.add(request(5));
    expect(log.selectedSeq).toBe(5);
    expect(log.unseen).toBe(0);
  });

  it('stays on a request opened to take the screen, even the newest, until released', () => {
    const log = logWith([1, 2]);
    log.select(2, true);
    log.add(request(3));
    expect(log.selectedSeq).toBe(2);
    expect(log.unseen).toBe(1);
    // Released on the newest... it is not the newest any more: still not following.
    log.unstay();
    expect(log.following).toBe(false);
    log.select(3, true);
    log.unstay();
    expect(log.following).toBe(true);
    expect(log.unseen).toBe(0);
  });

  it('keeps only the newest maxRequests, pinning the open request when it is pushed out', () => {
    const log = logWith([1, 2, 3], 3);
    log.select(1);
    log.add(request(4));
    log.add(request(5));
    expect(seqs(log)).toEqual([3, 4, 5]);
    expect(log.received).toBe(5);
    expect(log.dropped).toBe(2);
    expect(log.pinned?.seq).toBe(1);
    expect(log.selectedRequest?.seq).toBe(1);
    expect(log.holds(1)).toBe(true);
    expect(log.holds(2)).toBe(false);

    // Picking another lets it go.
    log.select(4);
    expect(log.pinned).toBeUndefined();
    expect(log.holds(1)).toBe(false);
  });

  it('does not pin anything while following: the selection moves to the newest', () => {
    const log = logWith([1, 2, 3, 4], 2);
    expect(seqs(log)).toEqual([3, 4]);
    expect(log.pinned).toBeUndefined();
    expect(log.selectedSeq).toBe(4);
  });

  it('drops evicted requests as dropped, and pins the open one among them', () => {
    const log = logWith([1, 2, 3, 4]);
    log.select(2);
    log.evicted(2);
    expect(seqs(log)).toEqual([3, 4]);
    expect(log.dropped).toBe(2);
    expect(log.pinned?.seq).toBe(2);
    expect(log.selectedRequest?.seq).toBe(2);

    // A later eviction that does not take the open request keeps the pin.
    log.evicted(3);
    expect(seqs(log)).toEqual([4]);
    expect(log.pinned?.seq).toBe(2);
    expect(log.dropped).toBe(3);
  });

  it('clears up to clearedSeq: fewer received, nothing counted dropped, and cleared seqs never come back', () => {
    const log = logWith([1, 2, 3, 4, 5]);
    log.select(5);
    expect(log.cleared(3)).toBe(false);
    expect(seqs(log)).toEqual([4, 5]);
    expect(log.received).toBe(2);
    expect(log.dropped).toBe(0);
    expect(log.add(request(2)).added).toBe(false);
    // An older clear does not bring anything back.
    log.cleared(1);
    expect(log.clearedSeq).toBe(3);
    expect(log.add(request(3)).added).toBe(false);
    expect(log.add(request(6)).added).toBe(true);
    expect(log.received).toBe(3);
  });

  it('clearing the selected (or pinned) request drops the selection and follows again', () => {
    const log = logWith([1, 2, 3], 2);
    log.select(2);
    log.add(request(4));
    expect(log.pinned?.seq).toBe(2);
    expect(log.unseen).toBe(1);
    expect(log.cleared(2)).toBe(true);
    expect(log.pinned).toBeUndefined();
    expect(log.selectedSeq).toBeUndefined();
    expect(log.following).toBe(true);
    expect(log.unseen).toBe(0);
    log.add(request(5));
    expect(log.selectedSeq).toBe(5);
  });

  it('drops forwarders’ results with the cleared requests, and refuses them for cleared seqs', () => {
    const log = logWith([1, 2]);
    expect(log.addForwarded(result(1))).toBe(true);
    expect(log.addForwarded(result(2))).toBe(true);
    log.cleared(1);
    expect(log.forwarded.get(1)).toEqual([]);
    expect(log.forwarded.get(2)).toHaveLength(1);
    expect(log.addForwarded(result(1))).toBe(false);
  });

  it('treats the backlog after a welcome as old news: not live, not unseen', () => {
    const log = logWith([1, 2]);
    log.select(1);
    log.welcome({ backlog: 2, clearedSeq: 0, lostWhileAway: false });
    expect(log.add(request(3))).toEqual({ added: true, live: false, lost: 0 });
    expect(log.unseen).toBe(0);
    // A repeat in the backlog still counts toward it.
    expect(log.add(request(3))).toEqual({ added: false, live: false, lost: 0 });
    expect(log.add(request(4)).live).toBe(true);
    expect(log.unseen).toBe(1);
    expect(log.selectedSeq).toBe(1);
  });

  it('drops what a welcome says was cleared, and says whether the selection went with it', () => {
    const log = logWith([1, 2, 3]);
    log.select(2);
    expect(log.welcome({ backlog: 0, clearedSeq: 1, lostWhileAway: false })).toBe(false);
    expect(log.welcome({ backlog: 0, clearedSeq: 2, lostWhileAway: false })).toBe(true);
    expect(seqs(log)).toEqual([3]);
  });

  it('counts requests lost while away on the first arrival after a resume that lost some, once', () => {
    const log = logWith([1, 2]);
    log.welcome({ backlog: 5, clearedSeq: 0, lostWhileAway: true });
    expect(log.add(request(8)).lost).toBe(5);
    expect(log.add(request(9)).lost).toBe(0);
    expect(log.received).toBe(9);
    expect(log.dropped).toBe(5);

    // A first join's gap is not news.
    const joined = logWith([]);
    joined.welcome({ backlog: 1, clearedSeq: 0, lostWhileAway: false });
    expect(joined.add(request(8)).lost).toBe(0);
  });

  it('counts from the clear when the log was cleared past what it held', () => {
    const log = logWith([1, 2]);
    log.welcome({ backlog: 1, clearedSeq: 4, lostWhileAway: true });
    expect(log.add(request(7)).lost).toBe(2);
  });

  it('counts a gap a poll found on the next arrival', () => {
    const log = logWith([1, 2, 3, 4]);
    log.gap();
    expect(log.add(request(7)).lost).toBe(2);
    log.gap();
    expect(log.add(request(8)).lost).toBe(0);
  });

  it('jumps to the latest: follows, nothing unseen, the pin let go', () => {
    const log = logWith([1, 2], 2);
    log.select(1);
    log.add(request(3));
    expect(log.pinned?.seq).toBe(1);
    log.jumpTo(3);
    expect(log.pinned).toBeUndefined();
    expect(log.selectedSeq).toBe(3);
    expect(log.following).toBe(true);
    expect(log.unseen).toBe(0);
  });

  it('asks for maxRequests at each arrival (the endpoint becomes known after the log starts)', () => {
    let max = 50;
    const log = new RequestLog(() => max);
    for (const seq of [1, 2, 3]) log.add(request(seq));
    max = 2;
    log.add(request(4));
    expect(seqs(log)).toEqual([3, 4]);
  });

  it('starts over on reset', () => {
    const log = logWith([1, 2, 3], 2);
    log.select(2);
    log.addForwarded(result(3));
    log.cleared(1);
    log.reset();
    expect(log.requests).toEqual([]);
    expect([log.received, log.dropped, log.clearedSeq, log.unseen]).toEqual([0, 0, 0, 0]);
    expect(log.selectedSeq).toBeUndefined();
    expect(log.following).toBe(true);
    expect(log.forwarded.get(3)).toEqual([]);
    expect(log.add(request(1)).added).toBe(true);
  });
});
