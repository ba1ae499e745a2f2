/** Tiny DOM builder. Text only ever goes in through textContent/attributes: never as HTML. */
type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  title?: string;
  attrs?: Record<string, string>;
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.text !== undefined) node.textContent = props.text;
  if (props.title !== undefined) node.title = props.title;
  for (const [name, value] of Object.entries(props.attrs ?? {})) node.setAttribute(name, value);
  for (const [type, listener] of Object.entries(props.on ?? {})) node.addEventListener(type, listener as EventListener);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} missing from index.html`);
  return node as T;
}

/** Copies text; falls back to a selection copy where the async clipboard is unavailable (plain http). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { attrs: { readonly: '', 'aria-hidden': 'true' }, class: 'offscreen' });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

export function download(filename: string, data: BlobPart, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const link = h('a', { attrs: { href: url, download: filename } });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Briefly shows a message in the live region, for screen readers and eyes alike. */
export function toast(message: string): void {
  const region = byId('toast');
  region.textContent = message;
  region.classList.add('show');
  clearTimeout(Number(region.dataset.timer));
  region.dataset.timer = String(setTimeout(() => region.classList.remove('show'), 1800));
}

/**
 * Asks before a destructive action, in the page's modal <dialog> (focus stays inside, Escape
 * cancels). Resolves true only when the reader chose the confirming button.
 */
export function confirmAction(title: string, text: string, confirmLabel: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  byId('confirm-title').textContent = title;
  byId('confirm-text').textContent = text;
  const ok = byId<HTMLButtonElement>('confirm-ok');
  const cancel = byId<HTMLButtonElement>('confirm-cancel');
  ok.textContent = confirmLabel;
  return new Promise((resolve) => {
    const finish = (answer: boolean) => () => dialog.close(answer ? 'confirm' : '');
    const onOk = finish(true);
    const onCancel = finish(false);
    ok.addEventListener('click', onOk);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener(
      'close',
      () => {
        ok.removeEventListener('click', onOk);
        cancel.removeEventListener('click', onCancel);
        resolve(dialog.returnValue === 'confirm');
      },
      { once: true },
    );
    dialog.returnValue = '';
    dialog.showModal();
    cancel.focus();
  });
}

/** Narrow screens show one pane at a time; app.css uses the same width. */
export const narrowScreen = window.matchMedia('(max-width: 879px)');
