// "Your endpoints": a dialog listing endpoints to go back to, each with Open, Forget and Delete.
// It renders an array of items, whatever keeps them (this browser's list, endpoint-list.ts, or a
// server's list of a signed-in user's endpoints), so more than one source can fill it. Loaded
// when first opened: a first visit does not need it.
import { byId, h } from '../dom.js';

/** One endpoint as the dialog shows it. */
export interface EndpointListItem {
  id: string;
  /** Its name or id, as its URL ends. */
  name: string;
  /** `Kept · expires in 6 d 23 h · 3 requests` */
  summary: string;
  /** The endpoint this tab watches. */
  current: boolean;
  /** Gone for sure: only Forget is offered. */
  expired: boolean;
}

export interface EndpointListActions {
  open(id: string): void;
  /** Off this browser's list; the endpoint itself stays. */
  forget(id: string): void;
  /** Deletes the endpoint on the server (after asking), and takes it off the list. */
  remove(id: string): Promise<void>;
}

const dialog = () => byId<HTMLDialogElement>('endpoints-dialog');

/** Opens the dialog with `items`; `refresh` gives them again after an action changed them. */
export function showEndpointList(items: () => EndpointListItem[], actions: EndpointListActions): void {
  const element = dialog();
  const render = (focusIndex?: number) => {
    const list = byId('endpoints-list');
    const shown = items();
    byId('endpoints-empty').hidden = shown.length > 0;
    list.replaceChildren(...shown.map((item) => row(item, actions, render)));
    // After a Forget or a Delete, focus stays in the list: on the row that took its place, else the close button.
    if (focusIndex !== undefined)
      (
        list.children[Math.min(focusIndex, shown.length - 1)]?.querySelector<HTMLElement>('button') ??
        byId('endpoints-close')
      ).focus();
  };
  render();
  if (!element.open) element.showModal();
}

function row(item: EndpointListItem, actions: EndpointListActions, render: (focusIndex?: number) => void): HTMLElement {
  const index = () =>
    [...byId('endpoints-list').children].findIndex((child) => child.getAttribute('data-id') === item.id);
  const label = item.current ? `${item.name} (this tab)` : item.name;
  const buttons: HTMLElement[] = [];
  if (!item.expired) {
    buttons.push(
      h('button', {
        text: item.current ? 'Open (here now)' : 'Open',
        attrs: { type: 'button', 'aria-label': `Open ${item.name}`, ...(item.current ? { disabled: '' } : {}) },
        on: {
          click: () => {
            dialog().close();
            actions.open(item.id);
          },
        },
      }),
    );
  }
  buttons.push(
    h('button', {
      text: 'Forget',
      title: 'Take it off this list: the endpoint itself stays, and its share link still opens it.',
      attrs: { type: 'button', 'aria-label': `Forget ${item.name}` },
      on: {
        click: () => {
          const at = index();
          actions.forget(item.id);
          render(at);
        },
      },
    }),
  );
  if (!item.expired) {
    buttons.push(
      h('button', {
        class: 'danger',
        text: 'Delete…',
        attrs: { type: 'button', 'aria-label': `Delete ${item.name}` },
        on: {
          click: () => {
            const at = index();
            void actions.remove(item.id).then(() => dialog().open && render(at));
          },
        },
      }),
    );
  }
  return h(
    'li',
    { class: `endpoint-item${item.current ? ' current' : ''}`, attrs: { 'data-id': item.id } },
    h(
      'div',
      { class: 'endpoint-item-text' },
      h('code', { class: 'endpoint-item-name', text: label }),
      h('span', { class: 'endpoint-item-summary muted', text: item.summary }),
    ),
    h('div', { class: 'endpoint-item-actions' }, ...buttons),
  );
}
