import { describe, expect, it } from 'vitest';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { createAttemptCounter, deliveryKeyOf, groupDeliveries, retriedSeqs } from '../../src/shared/delivery-groups.js';
import { capturedRequest } from '../helpers/captured.js';

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();

function attempt(
  seq: number,
  seconds: number,
  headers: Array<[string, string]>,
  body = `{"n":${seq}}`,
  status = 200,
): CapturedRequest {
  return capturedRequest({
    seq,
    receivedAt: at(seconds),
    headers: [['Content-Type', 'application/json'], ...headers],
    body,
    answer: { status, delayMs: 0, by: 'default' },
  });
}

describe('deliveryKeyOf', () => {
  it.each([
    ['github', [['X-GitHub-Delivery', 'd1']], '{}', 'github:d1'],
    ['standard-webhooks', [['webhook-id', 'msg_1']], '{}', 'standard-webhooks:msg_1'],
    ['svix', [['svix-id', 'msg_2']], '{}', 'svix:msg_2'],
    ['shopify', [['X-Shopify-Webhook-Id', 'b54557e4']], '{}', 'shopify:b54557e4'],
    ['twilio', [['I-Twilio-Idempotency-Token', 'tok']], '{}', 'twilio:tok'],
    ['stripe', [['Stripe-Signature', 't=1,v1=x']], '{"id":"evt_123","object":"event"}', 'stripe:evt_123'],
    ['stripe without its header', [], '{"id":"evt_9","object":"event"}', 'stripe:evt_9'],
    ['slack', [['X-Slack-Signature', 'v0=x']], '{"event_id":"Ev1","type":"event_callback"}', 'slack:Ev1'],
  ] as Array<[string, Array<[string, string]>, string, string]>)(
    'reads the delivery id of %s',
    (_name, headers, body, key) => {
      expect(deliveryKeyOf(attempt(1, 0, headers, body))?.key).toBe(key);
    },
  );

  it("takes Slack's attempt number from X-Slack-Retry-Num", () => {
    expect(deliveryKeyOf(attempt(1, 0, [['X-Slack-Retry-Num', '2']], '{"event_id":"Ev1"}'))).toMatchObject({
      key: 'slack:Ev1',
      attempt: 3,
    });
  });

  it('falls back to the body, and leaves bodiless requests and oversized ids alone', () => {
    expect(deliveryKeyOf(attempt(1, 0, []))?.source).toBe('identical body');
    expect(deliveryKeyOf(capturedRequest({ body: '', storedSize: 0, size: 0 }))).toBeUndefined();
    expect(deliveryKeyOf(attempt(1, 0, [['webhook-id', 'x'.repeat(300)]]))?.source).toBe('identical body');
    expect(deliveryKeyOf(attempt(1, 0, [], '{"id":"not-an-event","object":"event"}'))?.source).toBe('identical body');
  });
});

describe('groupDeliveries', () => {
  it('groups three Svix-style attempts answered 503, 503, 200 with their gaps and the documented schedule', () => {
    const id: Array<[string, string]> = [['webhook-id', 'msg_abc']];
    const groups = groupDeliveries([
      attempt(1, 0, id, '{}', 503),
      attempt(2, 5, id, '{}', 503),
      attempt(3, 305, id, '{}', 200),
      attempt(4, 10, [['webhook-id', 'other']]),
    ]);
    expect(groups).toHaveLength(2);
    const [first] = groups;
    expect(
      first?.attempts.map(({ request, attempt, gapAfterMs, expectedGapAfterMs }) => [
        request.seq,
        attempt,
        request.answer.status,
        gapAfterMs,
        expectedGapAfterMs,
      ]),
    ).toEqual([
      [1, 1, 503, 5000, 5000],
      [2, 2, 503, 300_000, 300_000],
      [3, 3, 200, undefined, undefined],
    ]);
    expect(first?.schedule?.source).toBe('https://docs.svix.com/retries');
  });

  it.each([
    ['GitHub', 'X-GitHub-Delivery'],
    ['Shopify', 'X-Shopify-Webhook-Id'],
    ['Svix', 'svix-id'],
  ])('groups %s attempts by %s even when the bodies differ', (_name, header) => {
    const groups = groupDeliveries([
      attempt(1, 0, [[header, 'same']], '{"a":1}'),
      attempt(2, 60, [[header, 'same']], '{"a":2}'),
    ]);
    expect(groups.map((group) => group.attempts.length)).toEqual([2]);
  });

  it('groups Stripe retries by the event id in the body, and Slack retries by event_id with their numbers', () => {
    const stripe = '{"id":"evt_1","object":"event","type":"invoice.paid"}';
    expect(
      groupDeliveries([
        attempt(1, 0, [['Stripe-Signature', 'x']], stripe),
        attempt(2, 3600, [['Stripe-Signature', 'y']], stripe),
      ])[0]?.attempts,
    ).toHaveLength(2);
    const slack = '{"event_id":"Ev9","type":"event_callback"}';
    const groups = groupDeliveries([
      attempt(1, 0, [['X-Slack-Signature', 'a']], slack),
      attempt(
        2,
        1,
        [
          ['X-Slack-Retry-Num', '1'],
          ['X-Slack-Signature', 'b'],
        ],
        slack,
      ),
      attempt(
        3,
        62,
        [
          ['X-Slack-Retry-Num', '2'],
          ['X-Slack-Signature', 'c'],
        ],
        slack,
      ),
    ]);
    expect(groups[0]?.attempts.map((entry) => [entry.attempt, entry.expectedGapAfterMs])).toEqual([
      [1, 0],
      [2, 60_000],
      [3, undefined],
    ]);
  });

  it('compares a gap with the schedule by attempt number, and not across a Slack retry that was not captured', () => {
    const slack = '{"event_id":"Ev5"}';
    const groups = groupDeliveries([
      attempt(1, 0, [['X-Slack-Retry-Num', '1']], slack),
      attempt(2, 60, [['X-Slack-Retry-Num', '2']], slack),
      attempt(3, 400, [], slack.replace('Ev5', 'Ev6')),
    ]);
    expect(groups[0]?.attempts.map((entry) => [entry.attempt, entry.gapAfterMs, entry.expectedGapAfterMs])).toEqual([
      [2, 60_000, 60_000],
      [3, undefined, undefined],
    ]);
    const gapped = groupDeliveries([
      attempt(1, 0, [['X-Slack-Signature', 'x']], slack),
      attempt(2, 400, [['X-Slack-Retry-Num', '3']], slack),
    ]);
    expect(gapped[0]?.attempts.map((entry) => [entry.attempt, entry.expectedGapAfterMs])).toEqual([
      [1, undefined],
      [4, undefined],
    ]);
  });

  it('groups identical bodies without an id only within the window, and only on the same method and path', () => {
    const body = '{"same":true}';
    const groups = groupDeliveries([
      attempt(1, 0, [], body),
      attempt(2, 10, [], body),
      attempt(3, 10 + 3601, [], body),
      capturedRequest({ seq: 4, subPath: '/other', body, receivedAt: at(11) }),
    ]);
    expect(groups.map((group) => group.attempts.map((entry) => entry.request.seq))).toEqual([[1, 2], [4], [3]]);
    expect(retriedSeqs(groups.flatMap((group) => group.attempts.map((entry) => entry.request)))).toEqual(
      new Set([1, 2]),
    );
  });

  it('groups 50 requests of 1 MiB bodies: the 25 identical ones as one delivery, each of the others alone', () => {
    const big = 'x'.repeat(1024 * 1024);
    const requests = Array.from({ length: 50 }, (_, i) =>
      capturedRequest({ seq: i + 1, isJson: false, body: i % 2 ? big : `${big}${i}`, receivedAt: at(i) }),
    );
    const groups = groupDeliveries(requests);
    expect(
      groups
        .find((group) => group.attempts.some((entry) => entry.request.seq === 2))
        ?.attempts.map((entry) => entry.request.seq),
    ).toEqual(Array.from({ length: 25 }, (_, i) => 2 * i + 2));
    expect(groups.filter((group) => group.attempts.length === 1)).toHaveLength(25);
  });
});

describe('createAttemptCounter', () => {
  it('numbers attempts as they arrive and forgets the oldest deliveries past its bound', () => {
    const count = createAttemptCounter(2);
    const id = (value: string): Array<[string, string]> => [['webhook-id', value]];
    expect(count(attempt(1, 0, id('a')))?.attempt).toBe(1);
    expect(count(attempt(2, 5, id('a')))?.attempt).toBe(2);
    count(attempt(3, 6, id('b')));
    count(attempt(4, 7, id('c')));
    // 'a' was the oldest of three: forgotten.
    expect(count(attempt(5, 8, id('a')))?.attempt).toBe(1);
    expect(count(attempt(6, 9, id('c')))?.attempt).toBe(2);
  });
});
