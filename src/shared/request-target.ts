import type { ParamMap } from './schemas/captured-request.js';

/**
 * The path after the endpoint's own (`/github/push` under `/api/webhook-tester/<id>`), "" when
 * none, as sent. An absolute-form target (`http://host/api/…`, RFC 9112 section 3.2.2) is read from its path.
 */
export function subPathOf(url: string, endpointPath: string): string {
  let pathStart = 0;
  if (url.charCodeAt(0) !== 0x2f /* / */) {
    const authority = url.indexOf('//');
    const slash = authority === -1 ? -1 : url.indexOf('/', authority + 2);
    if (slash === -1) return '';
    pathStart = slash;
  }
  const queryStart = url.indexOf('?', pathStart);
  const path = queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart);
  if (path.startsWith(endpointPath)) return path.slice(endpointPath.length);
  // The prefix or the id came percent-encoded (the router decoded it to find the endpoint):
  // the sub-path starts after as many segments, and is kept as sent.
  let at = 0;
  for (let segments = endpointPath.split('/').length - 1; segments > 0; segments--) {
    at = path.indexOf('/', at + 1);
    if (at === -1) return '';
  }
  return path.slice(at);
}

/** `a=1&a=2&b` -> `{ a: ['1', '2'], b: '' }`. A null-prototype map, so `__proto__` is just a name. */
export function parseParams(search: string): ParamMap {
  const params: ParamMap = Object.create(null) as ParamMap;
  for (const [name, value] of new URLSearchParams(search)) {
    const existing = params[name];
    if (existing === undefined) params[name] = value;
    else if (typeof existing === 'string') params[name] = [existing, value];
    else existing.push(value);
  }
  return params;
}
