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
  const machine = machineOf(steps);
  // The bare URL, with or without its trailing slash, is the sub-path "".
  return (subPath) => runMachine(machine, subPath === '/' ? '' : subPath);
}

/** A glob compiled for matching: per state, what it takes and where it goes. */
interface Machine {
  /** Per state: the character it takes (a `char` step), or ANY_CHAR / SEGMENT_CHAR, or NONE at the end. */
  takes: Int32Array;
  /** Per state: the states it reaches without taking a character, itself included: `reach[reachAt[s] .. reachAt[s + 1])`. */
  reach: Int32Array;
  reachAt: Int32Array;
}

const ANY_CHAR = -1;
const SEGMENT_CHAR = -2;
const NONE = -3;

function machineOf(steps: readonly Step[]): Machine {
  const count = steps.length + 1;
  const takes = new Int32Array(count).fill(NONE);
  const closures: number[][] = [];
  for (let state = steps.length; state >= 0; state--) {
    const step = steps[state];
    if (step?.kind === 'char') takes[state] = step.char;
    else if (step?.kind === 'any') takes[state] = ANY_CHAR;
    else if (step?.kind === 'segment') takes[state] = SEGMENT_CHAR;
    const reached = new Set<number>([state]);
    // Moves without a character only go forward, so later states' closures are known already.
    const next =
      step === undefined
        ? []
        : step.kind === 'segment' || step.kind === 'any'
          ? [state + 1]
          : step.kind === 'skip'
            ? [state + 1, step.to]
            : [];
    for (const to of next) for (const further of closures[to] as number[]) reached.add(further);
    closures[state] = [...reached];
  }
  const reachAt = new Int32Array(count + 1);
  for (let state = 0; state < count; state++)
    reachAt[state + 1] = (reachAt[state] as number) + (closures[state] as number[]).length;
  return { takes, reach: Int32Array.from(closures.flat()), reachAt };
}

/** Whether the machine consumes all of `text`: a breadth-first walk over its states, one character at a time. */
function runMachine({ takes, reach, reachAt }: Machine, text: string): boolean {
  const end = takes.length - 1;
  // Two sets of states as arrays, with a stamp per state (seen[state] === stamp: in the set being built).
  const seen = new Uint32Array(end + 1);
  let current = new Int32Array(end + 1);
  let next = new Int32Array(end + 1);
  let stamp = 1;
  let size = 0;
  for (let at = reachAt[0] as number; at < (reachAt[1] as number); at++) {
    const reached = reach[at] as number;
    seen[reached] = stamp;
    current[size++] = reached;
  }
  for (let index = 0; index < text.length && size > 0; index++) {
    const char = text.charCodeAt(index);
    stamp++;
    let nextSize = 0;
    for (let i = 0; i < size; i++) {
      const state = current[i] as number;
      const take = takes[state] as number;
      let to: number;
      if (take === char) to = state + 1;
      else if (take === ANY_CHAR || (take === SEGMENT_CHAR && char !== 0x2f)) to = state;
      else continue;
      for (let at = reachAt[to] as number, stop = reachAt[to + 1] as number; at < stop; at++) {
        const reached = reach[at] as number;
        if (seen[reached] === stamp) continue;
        seen[reached] = stamp;
        next[nextSize++] = reached;
      }
    }
    [current, next] = [next, current];
    size = nextSize;
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
  if ((glob.match(/\*\*?/g)?.length ?? 0) > MAX_GLOB_WILDCARDS)
    return `it has more than ${MAX_GLOB_WILDCARDS} wildcards (* or **)`;
  return undefined;
}
