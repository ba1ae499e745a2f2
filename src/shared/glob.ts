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
 *
 * Matching runs the glob as a set of states over the path, one character at a time, never
 * backtracking: its time is the path's length times the states alive at once (at most two per
 * wildcard), so a glob of many stars cannot stall a capture or a tab the way a backtracking
 * regular expression did (`/a*a*a*…b` took seconds on a 40-character path).
 */
export function globMatches(glob: string, subPath: string): boolean {
  return compileGlob(glob)(subPath);
}

/** One step of a compiled glob: a literal character, `*`, `**`, or the optional `/**` segment's skip. */
type Step = { kind: 'char'; char: number } | { kind: 'segment' } | { kind: 'any' } | { kind: 'skip'; to: number };

/** The glob turned into a test, for a caller that checks many paths against one glob. */
export function compileGlob(glob: string): (subPath: string) => boolean {
  const pattern = glob.startsWith('/') ? glob : `/${glob}`;
  if (pattern === '/') return (subPath) => subPath === '' || subPath === '/';
  const steps: Step[] = [];
  let at = 0;
  while (at < pattern.length) {
    if (pattern.startsWith('/**', at) && (at + 3 === pattern.length || pattern[at + 3] === '/')) {
      // A whole `**` segment: zero or more segments, the `/` before it included.
      steps.push({ kind: 'skip', to: steps.length + 3 }, { kind: 'char', char: 0x2f }, { kind: 'any' });
      at += 3;
    } else if (pattern.startsWith('**', at)) {
      steps.push({ kind: 'any' });
      at += 2;
    } else if (pattern[at] === '*') {
      steps.push({ kind: 'segment' });
      at += 1;
    } else {
      steps.push({ kind: 'char', char: pattern.charCodeAt(at) });
      at += 1;
    }
  }
  // The bare URL, with or without its trailing slash, is the sub-path "".
  return (subPath) => runSteps(steps, subPath === '/' ? '' : subPath);
}

/** Whether `steps` consume all of `text`: a breadth-first walk over the glob's states (state i: steps before i matched). */
function runSteps(steps: readonly Step[], text: string): boolean {
  const end = steps.length;
  // Two sets of states as arrays with a stamp per state (seen[state] === stamp: in the set being built).
  const seen = new Uint32Array(end + 1);
  let current = new Int32Array(end + 1);
  let next = new Int32Array(end + 1);
  const pending = new Int32Array(2 * (end + 1));
  let stamp = 1;
  let size = 0;
  let nextSize = 0;
  // Adds `state` to `next`, following the moves that take no character (past a wildcard, or past an optional segment).
  const add = (state: number) => {
    let top = 0;
    pending[top++] = state;
    while (top > 0) {
      const at = pending[--top] as number;
      if (seen[at] === stamp) continue;
      seen[at] = stamp;
      next[nextSize++] = at;
      const step = steps[at];
      if (step === undefined) continue;
      if (step.kind === 'segment' || step.kind === 'any') pending[top++] = at + 1;
      else if (step.kind === 'skip') {
        pending[top++] = at + 1;
        pending[top++] = step.to;
      }
    }
  };
  add(0);
  for (let index = 0; ; index++) {
    [current, next] = [next, current];
    size = nextSize;
    if (size === 0) return false;
    if (index === text.length) break;
    nextSize = 0;
    stamp++;
    const char = text.charCodeAt(index);
    for (let i = 0; i < size; i++) {
      const state = current[i] as number;
      const step = steps[state];
      if (step === undefined) continue;
      if (step.kind === 'char') {
        if (step.char === char) add(state + 1);
      } else if (step.kind === 'any' || (step.kind === 'segment' && char !== 0x2f)) {
        add(state);
      }
    }
  }
  for (let i = 0; i < size; i++) if (current[i] === end) return true;
  return false;
}

/**
 * Wildcards a rule's glob may hold: each can keep two states alive, so this bounds a match's work
 * at the path's length times about 2 × 16 steps.
 */
export const MAX_GLOB_WILDCARDS = 16;

/** Why a text is not a path glob we take (for answer rules), or undefined when it is one. */
export function globProblem(glob: string): string | undefined {
  if (glob === '') return 'it is empty (use "/" for the bare URL, "/**" for every path)';
  if (glob.length > 1024) return 'it is longer than 1024 characters';
  if (!/^[\x21-\x7e]+$/.test(glob)) return 'it may hold only visible ASCII, no spaces';
  if (/[?#]/.test(glob)) return 'a path has no ? or # (match the query with when.query)';
  if (glob.includes('***')) return '*** means nothing: use * within a segment or ** across segments';
  if ((glob.match(/\*\*?/g)?.length ?? 0) > MAX_GLOB_WILDCARDS) return `it has more than ${MAX_GLOB_WILDCARDS} wildcards (* or **)`;
  return undefined;
}
