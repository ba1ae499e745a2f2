// Plain page: creates a live endpoint and lists what arrives. Captured content goes in as text only.
import type { CapturedRequest } from '../../src/capture/captured-request.js';
import { LIVE_PATH, SUBPROTOCOL, type ServerMessage } from '../../src/live/protocol.js';

const $ = (id: string) => document.getElementById(id) as HTMLElement;

function el(tag: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
}

function show(request: CapturedRequest): void {
  const item = el('li');
  item.append(el('strong', `${request.method} ${request.url}`), el('span', `  ${request.receivedAt}  ${request.size} bytes`));
  item.append(el('pre', request.headers.map(([name, value]) => `${name}: ${value}`).join('\n')));
  item.append(el('pre', request.bodyEncoding === 'base64' ? `(binary, base64) ${request.body}` : request.body));
  $('log').prepend(item);
  $('count').textContent = String($('log').children.length);
}

const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${LIVE_PATH}`, SUBPROTOCOL);
socket.onopen = () => socket.send(JSON.stringify({ type: 'create' }));
socket.onmessage = (event) => {
  const message = JSON.parse(String(event.data)) as ServerMessage;
  if (message.type === 'welcome') {
    ($('url') as HTMLInputElement).value = message.endpoint.url;
    $('state').textContent = 'live';
  } else if (message.type === 'request') show(message.request);
  else if (message.type === 'expired') $('state').textContent = 'expired';
};
socket.onclose = () => ($('state').textContent = 'disconnected');
