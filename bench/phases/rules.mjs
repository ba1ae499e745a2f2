// @ts-check
// The rules phase (--only=rules): what answer rules cost a capture. One server, two kept
// endpoints in memory (DATA_DIR=none), no watcher: one without rules, one with 20 rules that
// never match the load's 1 KB JSON POSTs (globs, methods, headers and JSON fields: the JSON ones
// make the receiver parse each body). Measured in alternating rounds, so the paired difference
// is the rules' cost on this machine at that moment.
import { median } from '../common.mjs';
import { measure } from '../load.mjs';
import { startServer } from '../processes.mjs';

/** @typedef {import('../load.mjs').Run} Run */

/** Twenty rules none of which matches `POST /` with the load's body. */
export const NON_MATCHING_RULES = Array.from({ length: 20 }, (_, i) => {
  const answer = { status: 503, body: `rule ${i}` };
  switch (i % 4) {
    case 0:
      return { name: `path ${i}`, when: { path: `/github/${i}/**` }, answer };
    case 1:
      return { name: `method ${i}`, when: { method: 'PATCH', path: `/*/${i}` }, answer };
    case 2:
      return { name: `header ${i}`, when: { headers: { [`X-Rule-${i}`]: '*' } }, answer };
    default:
      return { name: `json ${i}`, when: { json: { [`event.kind${i}`]: 'never' } }, times: 3, answer };
  }
});

/**
 * A kept endpoint on `server` answering with `rules`; its receiver URL.
 * @param {import('../processes.mjs').Server} server
 * @param {unknown[]} rules
 */
async function endpointWith(server, rules) {
  const base = `http://127.0.0.1:${server.port}`;
  const made = /** @type {{ id: string, key: string, url: string }} */ (
    await (await fetch(`${base}/api/endpoints`, { method: 'POST', body: '{"kind":"kept"}' })).json()
  );
  if (rules.length > 0) {
    const set = await fetch(`${base}/api/endpoints/${made.id}/response`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${made.key}` },
      body: JSON.stringify({ status: 200, rules }),
    });
    if (!set.ok) throw new Error(`rules refused: ${await set.text()}`);
  }
  return made.url;
}

/** @param {import('../common.mjs').Config} config */
export async function rulesPhase(config) {
  const server = await startServer('hookwatch', {
    KEPT_CREATES_PER_ADDRESS: '0',
    RATE_LIMIT_PER_ENDPOINT: '0',
    RATE_LIMIT_PER_ADDRESS: '0',
    DATA_DIR: 'none',
  });
  try {
    const urls = { none: await endpointWith(server, []), twenty: await endpointWith(server, NON_MATCHING_RULES) };
    /** @type {Record<'none' | 'twenty', Run[]>} */
    const lists = { none: [], twenty: [] };
    for (let round = 0; round < config.rounds; round++) {
      /** @type {('none' | 'twenty')[]} */
      const order = round % 2 === 0 ? ['none', 'twenty'] : ['twenty', 'none'];
      for (const variant of order)
        lists[variant].push(
          await measure(server, urls[variant], undefined, {
            label: `kept endpoint, ${variant === 'none' ? 'no rules' : '20 rules, none matching'}`,
            seconds: config.seconds,
          }),
        );
    }
    const cpu = (/** @type {Run[]} */ runs) => median(runs.map((r) => r.cpuMicrosPerRequest));
    const differences = lists.twenty.map((r, i) => r.cpuMicrosPerRequest - lists.none[i].cpuMicrosPerRequest);
    return {
      rules: {
        noRulesMicros: cpu(lists.none),
        twentyRulesMicros: cpu(lists.twenty),
        pairedDifferenceMicros: median(differences),
        ratio: cpu(lists.twenty) / cpu(lists.none),
        perRound: lists.none.map((r, i) => [
          Math.round(r.cpuMicrosPerRequest),
          Math.round(lists.twenty[i].cpuMicrosPerRequest),
        ]),
      },
    };
  } finally {
    server.child.kill();
  }
}

/**
 * The phase's lines in the report, and its target: 20 rules that do not match cost at most 10 % more.
 * @param {Awaited<ReturnType<typeof rulesPhase>>['rules']} rules
 * @param {(n: number, digits?: number) => string} f
 */
export function rulesReport(rules, f) {
  const holds = rules.ratio <= 1.1;
  return {
    lines: [
      `Answer rules, kept endpoint, 1 KB JSON POSTs, no watcher: no rules ${f(rules.noRulesMicros)} µs/req, 20 rules none matching ${f(rules.twentyRulesMicros)} µs/req ` +
        `(${f(rules.ratio, 2)}×; median paired difference ${f(rules.pairedDifferenceMicros)} µs; rounds [none, 20]: ${JSON.stringify(rules.perRound)}). Target ≤ 1.10×: ${holds ? 'holds' : 'missed'}.`,
    ],
    /** @type {import('../report.mjs').Target[]} */
    targets: [['20 non-matching rules, CPU per capture against none (≤ 1.10×)', rules.ratio, holds]],
  };
}
