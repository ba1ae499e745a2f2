// "Types": a TypeScript type, a zod schema and a JSON Schema that accept every JSON body the list
// shows (all, or what the filter lets through), to copy or download (emit-types.ts). Loaded with
// import() when asked for. The generated code is text in a <pre>, never markup.
import { bodyTextOf } from '../../../src/shared/body-text.js';
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { emitTypes, inferFromBodies, type TypeFormat } from '../../../src/shared/emit-types.js';
import { MAX_JSON_DEPTH } from '../../../src/shared/lossless-json.js';
import { copyText, download, h, toast } from '../dom.js';

const FORMATS: Array<{ format: TypeFormat; name: string; file: string; type: string }> = [
  { format: 'ts', name: 'TypeScript', file: 'webhook-body.ts', type: 'text/plain' },
  { format: 'zod', name: 'zod', file: 'webhook-body.schema.ts', type: 'text/plain' },
  { format: 'json-schema', name: 'JSON Schema', file: 'webhook-body.schema.json', type: 'application/json' },
];

/** Opens the dialog for `requests` (oldest first); `filtered`: they are what a filter lets through. */
export function openTypesDialog(requests: readonly CapturedRequest[], filtered: boolean): void {
  const bodies = requests.flatMap((request) => {
    const text = request.isJson ? bodyTextOf(request) : undefined;
    return text === undefined ? [] : [{ label: `#${request.seq}`, text }];
  });
  const { inferred, labels, skipped } = inferFromBodies(bodies);
  const deep = skipped > 0 ? ` (${skipped} nested deeper than ${MAX_JSON_DEPTH} levels, skipped)` : '';
  const outputs = new Map(
    FORMATS.map(({ format }) => [format, inferred.samples === 0 ? '' : emitTypes(inferred, format, { labels })]),
  );

  document.getElementById('types-dialog')?.remove();
  const title = h('h2', { attrs: { id: 'types-title' }, text: 'Types from the bodies' });
  const summary = h('p', {
    attrs: { id: 'types-summary' },
    text:
      inferred.samples === 0
        ? `None of the ${requests.length} ${filtered ? 'shown ' : ''}requests has a JSON body to type${deep}.`
        : `From ${inferred.samples} JSON bod${inferred.samples === 1 ? 'y' : 'ies'} of the ${requests.length} ${filtered ? 'shown' : ''} request${requests.length === 1 ? '' : 's'}${deep}: optional fields are missing from some bodies; comments say which come and go.`.replace(
            '  ',
            ' ',
          ),
  });
  const code = h('pre', { class: 'types-code', attrs: { tabindex: '0', 'aria-label': 'Generated code' } });
  let current: TypeFormat = 'ts';
  const tabs = FORMATS.map(({ format, name }) =>
    h('button', {
      class: 'types-tab',
      text: name,
      attrs: { type: 'button', 'aria-pressed': String(format === current), 'data-format': format },
      on: { click: () => show(format) },
    }),
  );
  const show = (format: TypeFormat) => {
    current = format;
    code.textContent = outputs.get(format) ?? '';
    for (const tab of tabs) tab.setAttribute('aria-pressed', String(tab.dataset.format === format));
  };
  const chosen = () => FORMATS.find((entry) => entry.format === current) ?? (FORMATS[0] as (typeof FORMATS)[number]);
  const actions = h(
    'div',
    { class: 'confirm-actions' },
    h('button', {
      text: 'Copy',
      attrs: { type: 'button', id: 'types-copy' },
      on: {
        click: () =>
          void copyText(code.textContent ?? '').then((ok) => toast(ok ? `${chosen().name} copied` : 'Could not copy')),
      },
    }),
    h('button', {
      text: 'Download',
      attrs: { type: 'button', id: 'types-download' },
      on: { click: () => download(chosen().file, code.textContent ?? '', chosen().type) },
    }),
    h('button', {
      class: 'primary',
      text: 'Close',
      attrs: { type: 'button', id: 'types-close' },
      on: { click: () => dialog.close() },
    }),
  );
  const dialog: HTMLDialogElement = h(
    'dialog',
    {
      class: 'confirm types-dialog',
      attrs: { id: 'types-dialog', 'aria-labelledby': 'types-title', 'aria-describedby': 'types-summary' },
    },
    title,
    summary,
    ...(inferred.samples === 0
      ? []
      : [h('div', { class: 'types-tabs', attrs: { role: 'group', 'aria-label': 'Format' } }, ...tabs), code]),
    actions,
  );
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  show('ts');
  dialog.showModal();
}
