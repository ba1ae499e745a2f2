// The detail's "Delivery" section: the attempts of the open request's delivery (delivery-groups.ts),
// each with the answer it got and what chose it, and the gap to the next beside the provider's
// documented schedule. Loaded with import() when a request is opened.
import type { CapturedRequest, RecordedAnswer } from '../../../src/shared/schemas/captured-request.js';
import { groupDeliveries, type DeliveryGroup } from '../../../src/shared/delivery-groups.js';
import { h } from '../dom.js';
import { localDateTimeParts } from '../format.js';

/** `850 ms`, `5.0 s`, `5 min 2 s`, `2 h 3 min`. */
export function formatGap(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

/** The group the request belongs to, among the requests held. */
export function deliveryOf(request: CapturedRequest, requests: readonly CapturedRequest[]): DeliveryGroup | undefined {
  const all = requests.some((held) => held.seq === request.seq) ? requests : [...requests, request];
  return groupDeliveries(all).find((group) => group.attempts.some((entry) => entry.request.seq === request.seq));
}

function describeKey(group: DeliveryGroup): string {
  const { key } = group;
  return key.id === undefined ? 'the same method, path and body' : `${key.source.replace(/ header$/, '')} ${key.id}`;
}

/**
 * The section, or null when the request stands alone (no provider id, no repeat). `open`
 * selects another attempt in the log; `answeredBy` says what answered (answered-by.ts, passed
 * in so that this chunk does not split the rules code out of the first load).
 */
export function renderDeliveryTimeline(
  request: CapturedRequest,
  requests: readonly CapturedRequest[],
  open: (seq: number) => void,
  answeredBy: (answer: RecordedAnswer) => string,
): HTMLElement | null {
  const group = deliveryOf(request, requests);
  if (!group || (group.attempts.length < 2 && group.key.provider === undefined)) return null;
  const count = group.attempts.length;
  const id = `delivery-title-${request.seq}`;
  const section = h(
    'section',
    { class: 'detail-section delivery', attrs: { 'aria-labelledby': id, 'data-attempts': String(count) } },
    h('h3', { attrs: { id }, text: `Delivery: ${count} attempt${count === 1 ? '' : 's'}` }),
  );
  section.append(h('p', { class: 'delivery-key' }, 'Grouped by ', h('code', { text: describeKey(group) }), '.'));
  if (group.schedule)
    section.append(
      h('p', { class: 'muted delivery-schedule', text: `${group.schedule.label} retries: ${group.schedule.summary}.` }),
    );
  const items = group.attempts.map((entry) => {
    const current = entry.request.seq === request.seq;
    const { status } = entry.request.answer;
    const tone = status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok';
    const when = localDateTimeParts(entry.request.receivedAt)[1];
    const head = current
      ? h('span', { class: 'attempt-name', text: `Attempt ${entry.attempt} · #${entry.request.seq} (this request)` })
      : h('button', {
          class: 'link-button attempt-name',
          text: `Attempt ${entry.attempt} · #${entry.request.seq}`,
          attrs: { type: 'button', title: `Open request #${entry.request.seq}` },
          on: { click: () => open(entry.request.seq) },
        });
    const item = h(
      'li',
      { class: `attempt${current ? ' attempt-current' : ''}`, attrs: current ? { 'aria-current': 'true' } : {} },
      head,
      h('span', { class: 'attempt-time', text: when }),
      h(
        'span',
        { class: 'attempt-answer' },
        h('span', { class: `answer-status answer-${tone}`, text: String(status) }),
        ` ${answeredBy(entry.request.answer).replace(/^Answered /, '')}`,
      ),
    );
    if (entry.gapAfterMs !== undefined) {
      const expected =
        entry.expectedGapAfterMs === undefined
          ? ''
          : ` (schedule: ${entry.expectedGapAfterMs === 0 ? 'at once' : formatGap(entry.expectedGapAfterMs)})`;
      item.append(
        h('span', { class: 'attempt-gap', text: `↓ next attempt ${formatGap(entry.gapAfterMs)} later${expected}` }),
      );
    }
    return item;
  });
  section.append(h('ol', { class: 'timeline', attrs: { 'aria-label': 'Attempts, oldest first' } }, ...items));
  return section;
}
