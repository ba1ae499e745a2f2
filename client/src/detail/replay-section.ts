// The detail's "Replay" section: two buttons, and the panel (replay-panel.ts) loaded with import()
// the first time one is used, so the first load does not carry it.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { h } from '../dom.js';
import type { Replays } from '../transport/replays.js';

export function renderReplaySection(request: CapturedRequest, replays: Replays, receiverUrl: string): HTMLElement {
  const body = h('div', { class: 'replay-panel' });
  const open = (edit: boolean) =>
    void import('./replay-panel.js').then(
      ({ mountReplayPanel }) => mountReplayPanel(body, request, { replays, receiverUrl }, edit),
      () =>
        body.replaceChildren(
          h('p', { class: 'verdict-bad', text: 'Replay could not be loaded: reload the page to try again.' }),
        ),
    );
  return h(
    'section',
    { class: 'detail-section replay' },
    h('h3', { text: 'Replay' }),
    h('p', {
      class: 'muted',
      text: 'Sends this request again through the hookwatch forward connected to this endpoint, from your machine. A replay is not stored as a request.',
    }),
    h(
      'div',
      { class: 'actions' },
      h('button', { text: 'Replay', attrs: { type: 'button' }, on: { click: () => open(false) } }),
      h('button', { text: 'Edit and replay', attrs: { type: 'button' }, on: { click: () => open(true) } }),
    ),
    body,
  );
}
