import type { ClientMessage, ReplayOrderMessage } from '../shared/protocol.js';
import type { CommandContext } from './command.js';
import { displayPath, toPrintable } from './format.js';
import { buildForwardedMessage, REPORT_LIMITS } from './forward-report.js';
import { PathRefusal, prepareForward, type ForwardTarget } from './forward-request.js';
import type { TargetClient } from './send-request.js';

/**
 * A replay the page asked for: sends the request it carries (the stored one, or the page's
 * edited copy) to the target with forward's own rules (path safety included), once, without
 * retries (whoever asked is watching and can ask again), and reports `replay-started` then
 * `replay-result` under the order's id. Marked "replay" on the terminal: it is not a capture.
 */
export async function performReplay(
  order: ReplayOrderMessage,
  client: TargetClient,
  target: ForwardTarget,
  send: (message: ClientMessage) => boolean,
  context: CommandContext,
): Promise<void> {
  const label = `replay of #${order.seq} ${toPrintable(order.request.method)} ${displayPath(order.request)}`;
  let prepared;
  try {
    prepared = prepareForward(order.request, target);
  } catch (error) {
    if (!(error instanceof PathRefusal)) throw error;
    const reason = `refused: ${error.message}`;
    send({
      ...buildForwardedMessage(order.seq, `${target.protocol}//${target.host}${target.basePath}`, {
        ok: false,
        error: reason,
        ms: 0,
      }),
      type: 'replay-result',
      id: order.id,
    });
    context.out(`${label} → not sent (${toPrintable(reason)})`);
    return;
  }
  const targetText = `${target.protocol}//${target.host}${prepared.path}`;
  send({
    type: 'replay-started',
    id: order.id,
    seq: order.seq,
    target: targetText.slice(0, REPORT_LIMITS.targetChars),
  });
  const result = await client.send(prepared);
  const report = buildForwardedMessage(
    order.seq,
    targetText,
    result.ok ? result : { ok: false, error: result.error, ms: result.ms },
  );
  send({ ...report, type: 'replay-result', id: order.id });
  context.out(
    `${label} → ${result.ok ? `${result.status} in ${Math.round(result.ms)} ms` : `not delivered (${toPrintable(result.error)})`}`,
  );
}
