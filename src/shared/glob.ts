/**
 * Path globs over a captured request's sub-path (`CapturedRequest.subPath`: the path under the
 * receiver URL, "" for the bare URL), for `hookwatch wait --path` and answer rules. Pure, so
 * the page can use it too.
 *
 *   `*`   any characters within one segment (no `/`), none included
 *   `**`  any characters across segments; as a whole segment (`/a/**`, `/**\/b`) also none at
 *         all, so `/github/**` matches `/github` itself and `/**` matches every path
 *   `/`   alone: the bare receiver URL (sub-path "" or "/")
 *
 * Everything else is literal and case-sensitive, compared with the sub-path as sent (percent-
 * encoding is not decoded). A glob without a leading `/` gets one.
 */
export function globMatches(glob: string, subPath: string): boolean {
  return compileGlob(glob)(subPath);
}

/** The glob turned into a test, for a caller that checks many paths against one glob. */
export function compileGlob(glob: string): (subPath: string) => boolean {
  const pattern = glob.startsWith('/') ? glob : `/${glob}`;
  if (pattern === '/') return (subPath) => subPath === '' || subPath === '/';
  let source = '';
  let at = 0;
  while (at < pattern.length) {
    if (pattern.startsWith('/**', at) && (at + 3 === pattern.length || pattern[at + 3] === '/')) {
      // A whole `**` segment: zero or more segments, the `/` before it included.
      source += '(?:/.*)?';
      at += 3;
    } else if (pattern.startsWith('**', at)) {
      source += '.*';
      at += 2;
    } else if (pattern[at] === '*') {
      source += '[^/]*';
      at += 1;
    } else {
      source += (pattern[at] as string).replace(/[\\^$.|?+()[\]{}]/g, '\\$&');
      at += 1;
    }
  }
  const regex = new RegExp(`^${source}$`, 's');
  // The bare URL, with or without its trailing slash, is the sub-path "".
  return (subPath) => regex.test(subPath === '/' ? '' : subPath);
}

/** Why a text is not a path glob we take (for answer rules), or undefined when it is one. */
export function globProblem(glob: string): string | undefined {
  if (glob === '') return 'it is empty (use "/" for the bare URL, "/**" for every path)';
  if (glob.length > 1024) return 'it is longer than 1024 characters';
  if (!/^[\x21-\x7e]+$/.test(glob)) return 'it may hold only visible ASCII, no spaces';
  if (/[?#]/.test(glob)) return 'a path has no ? or # (match the query with when.query)';
  if (glob.includes('***')) return '*** means nothing: use * within a segment or ** across segments';
  return undefined;
}
