import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import { backoffDelay, formatSeconds, sleep } from './backoff.js';
import { parseCommandArgs, parseInteger, resolveShareLink, UsageError, type CommandContext } from './command.js';
import { MAX_LOCAL_ANSWER_BODY_BYTES, type ForwardedMessage } from '../shared/protocol.js';
import { displayPath, formatForwardLine, toPrintable } from './format.js';
import { buildForwardedMessage, type ForwardResult } from './forward-report.js';
import {
  parseTarget,
  PathRefusal,
  prepareForward,
  TargetError,
  type ForwardTarget,
  type PreparedRequest,
} from './forward-request.js';
import { LiveFollower } from './live-follower.js';
import { TargetClient, type SendResult } from './send-request.js';
import { localAnswerProblem, toLocalAnswer } from './local-answer.js';
import { performReplay } from './forward-replay.js';
import {
  checkSignature,
  formatSignatureLine,
  parseVerifyOption,
  warnInlineSecret,
  type SignatureCheck,
  type SignatureDisplay,
  type VerifySpec,
} from './verify.js';
import { deadline } from '../shared/deadline.js';

export const FORWARD_USAGE = `Usage: hookwatch forward <share-link> --to <url> [options]

Replays every new request captured at the endpoint to <url>, byte for byte: same method,
headers (order, case, duplicates; Host set to the target; hop-by-hop ones dropped) and body.
The path sent is <url>'s path + the captured sub-path + the raw query. A sub-path with a
dot-segment (., .., %2e%2e, ...) would leave <url>'s path: that request is refused, not sent.
The sender's forwarding headers (X-Forwarded-*, Forwarded, X-Real-IP, ...) are dropped and
X-Forwarded-For is set to the address the server saw it come from.

  <share-link>          the page's link, http(s)://host/#<endpointId>.<key>; - reads it from stdin
  --to <url>            where to send, e.g. http://localhost:3000/webhook (required)
  --from-seq <n>        also replay the stored requests after seq n (0: all the server kept)
  --concurrency <n>     requests in flight at once (default 1: one at a time, in seq order)
  --retries <n>         retries when the target is unreachable or times out (default 5)
  --timeout <seconds>   how long to wait for the target's whole answer (default 30)
  --verify <sender>:<secret>
                        check each request's signature and print the verdict under its line;
                        <sender>: github, stripe, slack, shopify, standard-webhooks, or auto
                        (guess from the headers). <sender>:env:<NAME> reads the secret from
                        the environment variable NAME, which keeps it out of ps.
  --show-expected       on a mismatch, print the whole expected signature, not its first 12
                        characters: it is a valid signature of the body (docs/signatures.md).
  --respond             answer the endpoint's senders with what <url> answers: each sender
                        waits (up to the server's RESPOND_TIMEOUT_MS, 10 s by default) and
                        gets the status, headers and body (up to 1 MiB) of your app's answer.
                        The latest forward --respond on an endpoint wins; without one, or
                        past the wait, senders get the configured answer.
  -h, --help            this text

Request lines go to stdout, status and warnings to stderr. Each result (status, time, the
answer's headers and first 4 KiB) is also sent to the pages watching the endpoint. A page's
Replay (or Edit and replay) is sent to <url> too, once, and printed "replay of #N ...". Ctrl-C
finishes the request in flight (up to 5 s) and exits 0.`;

/** After Ctrl-C, how long a request in flight may take to finish before it is cut. */
const STOP_GRACE_MS = 5_000;
/**
 * Results sent to the page per second, and the burst allowed. The server charges a tenth of a
 * message for each and allows LIVE_MESSAGES_PER_SECOND (20 by default, bursts of twice that):
 * half of that budget leaves room for the join and keeps a burst from getting the socket closed.
 */
const REPORTS_PER_SECOND = 100;
const REPORT_BURST = 200;
/** Queued requests past which we stop reading the socket until the target catches up. */
const QUEUE_HIGH_WATER = 200;
const QUEUE_LOW_WATER = 50;

export async function runForward(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      'from-seq': { type: 'string' },
      concurrency: { type: 'string' },
      retries: { type: 'string' },
      timeout: { type: 'string' },
      verify: { type: 'string' },
      'show-expected': { type: 'boolean' },
      respond: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(FORWARD_USAGE);
    return 0;
  }
  if (values.to === undefined)
    throw new UsageError('--to <url> is required (where to forward, e.g. http://localhost:3000/webhook)');
  let target: ForwardTarget;
  try {
    target = parseTarget(values.to);
  } catch (error) {
    if (error instanceof TargetError) throw new UsageError(error.message);
    throw error;
  }
  const fromSeq =
    values['from-seq'] === undefined
      ? undefined
      : parseInteger(values['from-seq'], '--from-seq', 0, Number.MAX_SAFE_INTEGER);
  const concurrency = parseInteger(values.concurrency ?? '1', '--concurrency', 1, 64);
  const retries = parseInteger(values.retries ?? '5', '--retries', 0, 100);
  const timeoutMs = parseInteger(values.timeout ?? '30', '--timeout', 1, 3600) * 1000;
  const verify = values.verify === undefined ? undefined : parseVerifyOption(values.verify);
  if (values['show-expected'] && verify === undefined) throw new UsageError('--show-expected goes with --verify');
  const display: SignatureDisplay = { showExpected: values['show-expected'] === true };
  const link = await resolveShareLink(positionals, context);
  if (verify?.source === 'inline') warnInlineSecret(context);

  const respond = values.respond === true;
  // A responder relays the whole answer (up to 1 MiB, and one byte more to know it was over).
  const client = new TargetClient(target, timeoutMs, respond ? MAX_LOCAL_ANSWER_BODY_BYTES + 1 : undefined);
  /** The responder id the server gave this process, while it answers senders. */
  let responderId: string | undefined;
  /** This process's claim's id, holding or waiting its turn behind a later `--respond`. */
  let ownId: string | undefined;
  let answeredBefore = false;
  const targetText = `${target.protocol}//${target.host}${target.basePath}`;
  // The follower's handlers run only once run() is under way, by when the forwarder exists.
  const follower: LiveFollower = new LiveFollower({
    link,
    accessToken: context.accessToken,
    ...(fromSeq === undefined ? {} : { fromSeq }),
    handlers: {
      onJoined(welcome, resumed) {
        // Announced on every join, first (before anything is printed, so a script that waits for
        // the "joined" line can replay at once): the page's replays come to this socket.
        follower.send({ type: 'announce-forwarder', target: targetText.slice(0, 512) });
        if (!resumed) {
          const what = fromSeq === undefined ? 'new requests' : `requests after #${fromSeq}`;
          context.err(
            `joined endpoint ${link.endpointId} (receiver ${welcome.endpoint.url}); forwarding ${what} to ${targetText}`,
          );
          if (fromSeq === undefined && welcome.backlog > 0)
            context.err(`skipping ${welcome.backlog} stored request(s); --from-seq 0 forwards them`);
          if (fromSeq !== undefined && welcome.gap)
            context.err(
              `warning: some requests after #${fromSeq} were already dropped by the server (it keeps the newest ${welcome.endpoint.maxRequests})`,
            );
        } else {
          context.err(`rejoined endpoint ${link.endpointId}; resuming after #${follower.lastSeq}`);
          if (welcome.gap)
            context.err(
              `warning: requests were dropped while away (the server keeps the newest ${welcome.endpoint.maxRequests}); they were not forwarded`,
            );
        }
        // Claimed on every join: a claim lives with the socket that made it. Until the server
        // says which id is ours, an announcement of a new one is not news of being replaced.
        if (respond) {
          responderId = undefined;
          ownId = undefined;
          follower.send({ type: 'claim-responder' });
        }
      },
      onResponder(message) {
        if (!respond) return;
        if (message.you === true) {
          if (!answeredBefore) context.err(`answering the endpoint's senders with ${targetText}'s answers`);
          answeredBefore = true;
          ownId = message.id ?? undefined;
          responderId = ownId;
        } else if (ownId !== undefined && message.id === ownId && responderId === undefined) {
          // The later one stopped: this claim, waiting its turn, holds again.
          responderId = ownId;
          context.err(`the other hookwatch forward --respond stopped; answering the endpoint's senders again`);
        } else if (responderId !== undefined && message.id !== responderId) {
          responderId = undefined;
          context.err(
            `another hookwatch forward --respond took over answering senders; this one only forwards now, and answers again when that one stops`,
          );
        }
      },
      onRequest: (request) => forwarder.add(request),
      onReplay: (order) => void performReplay(order, client, target, (message) => follower.send(message), context),
      onStatus: (message) => context.err(message),
    },
  });
  const reporter = new ResultReporter((message) => follower.send(message), context);
  const answerSender = (request: CapturedRequest, result: Extract<SendResult, { ok: true }>) => {
    if (responderId === undefined) return;
    const refusal = localAnswerProblem(result);
    if (refusal)
      return context.err(
        `#${request.seq}: your app's answer was not relayed (${refusal}); the sender gets the configured answer`,
      );
    follower.send(toLocalAnswer(request.seq, result));
  };
  const forwarder = new Forwarder(
    client,
    target,
    { concurrency, retries, verify, display, answerSender },
    context,
    reporter,
    {
      onBacklogged: () => follower.pause(),
      onCaughtUp: () => follower.resume(),
    },
  );

  const stop = () => follower.stop();
  context.stopSignal.addEventListener('abort', stop, { once: true });
  const end = await follower.run();
  context.stopSignal.removeEventListener('abort', stop);

  if (end.reason === 'stopped') {
    const unsent = forwarder.stopTaking();
    await forwarder.settle(STOP_GRACE_MS, context.hardStopSignal);
    client.close();
    context.err(forwarder.summary(unsent, follower.lastSeq));
    return 0;
  }
  context.err(end.message);
  if (end.reason === 'gone') {
    // What is already held still goes out: the target may want it even though the endpoint is gone.
    await forwarder.drain(context.stopSignal);
    await forwarder.settle(STOP_GRACE_MS, context.hardStopSignal);
  }
  client.close();
  return 1;
}

/**
 * Passes each result to the pages watching the endpoint, as a `forwarded` message on the live
 * socket. A result that cannot go (no joined socket right now, or over the rate) is dropped:
 * the terminal has it anyway, and queueing would only let a burst get the socket closed.
 */
class ResultReporter {
  private tokens = REPORT_BURST;
  private refilledAt = performance.now();
  private overRate = false;

  constructor(
    private readonly send: (message: ForwardedMessage) => boolean,
    private readonly context: CommandContext,
  ) {}

  report(message: ForwardedMessage): void {
    const now = performance.now();
    this.tokens = Math.min(REPORT_BURST, this.tokens + ((now - this.refilledAt) / 1000) * REPORTS_PER_SECOND);
    this.refilledAt = now;
    if (this.tokens < 1) {
      // Once per run of drops: a flood of warnings would bury the request lines.
      if (!this.overRate)
        this.context.err(
          `#${message.seq}: result not shown on the page: more than ${REPORTS_PER_SECOND} results a second`,
        );
      this.overRate = true;
      return;
    }
    if (!this.send(message)) {
      this.context.err(`#${message.seq}: result not shown on the page: not connected to the server right now`);
      return;
    }
    this.tokens -= 1;
    this.overRate = false;
  }
}

interface FlowControl {
  /** The queue is long: stop reading from the socket. */
  onBacklogged(): void;
  /** The queue is short again. */
  onCaughtUp(): void;
}

/** Forwards handed requests in seq order, `concurrency` at a time, retrying an unreachable target. */
class Forwarder {
  private readonly queue: CapturedRequest[] = [];
  private active = 0;
  private accepting = true;
  /** Seqs cut off by a stop: the first of them is where a later --from-seq should begin. */
  private readonly unfinished: number[] = [];
  /** Aborted on stop: no new retry starts. */
  private readonly noMoreRetries = new AbortController();
  /** Aborted when the stop grace runs out: requests in flight are cut. */
  private readonly cutInFlight = new AbortController();
  private waiters: Array<() => void> = [];

  constructor(
    private readonly client: TargetClient,
    private readonly target: ForwardTarget,
    private readonly options: {
      concurrency: number;
      retries: number;
      verify: VerifySpec | undefined;
      display: SignatureDisplay;
      /** Relays the target's answer to the request's sender (`--respond`). */
      answerSender: (request: CapturedRequest, result: Extract<SendResult, { ok: true }>) => void;
    },
    private readonly context: CommandContext,
    private readonly reporter: ResultReporter,
    private readonly flow: FlowControl,
  ) {}

  add(request: CapturedRequest): void {
    if (!this.accepting) return;
    this.queue.push(request);
    if (this.queue.length >= QUEUE_HIGH_WATER) this.flow.onBacklogged();
    this.pump();
  }

  /** Stops taking requests and returns how many queued ones will not be sent. */
  stopTaking(): number {
    this.accepting = false;
    this.noMoreRetries.abort();
    const unsent = this.queue.splice(0);
    this.unfinished.push(...unsent.map((request) => request.seq));
    return unsent.length;
  }

  /** Waits until the queue is empty and nothing is in flight, or `signal` aborts. */
  async drain(signal: AbortSignal): Promise<void> {
    while ((this.queue.length > 0 || this.active > 0) && !signal.aborted) await this.changed(signal);
  }

  /** Lets requests in flight finish for up to `graceMs` (or until `hardStop`), then cuts them. */
  async settle(graceMs: number, hardStop: AbortSignal): Promise<void> {
    this.stopTaking();
    const grace = deadline(graceMs, hardStop);
    await this.drain(grace.signal);
    grace.clear();
    if (this.active === 0) return;
    this.cutInFlight.abort();
    await this.drain(new AbortController().signal);
  }

  /** The stop report: what was not forwarded, and where to pick up later. */
  summary(unsent: number, lastSeq: number): string {
    if (this.unfinished.length === 0)
      return `stopped; everything up to #${lastSeq} was handled (continue later with --from-seq ${lastSeq})`;
    const first = Math.min(...this.unfinished);
    const queued = unsent > 0 ? `${unsent} queued request(s) not sent` : 'a request in flight was cut';
    return `stopped; ${queued}, from #${first} (continue later with --from-seq ${first - 1})`;
  }

  private pump(): void {
    while (this.accepting && this.active < this.options.concurrency && this.queue.length > 0) {
      const request = this.queue.shift() as CapturedRequest;
      if (this.queue.length === QUEUE_LOW_WATER) this.flow.onCaughtUp();
      this.active++;
      void this.deliver(request).finally(() => {
        this.active--;
        this.pump();
        this.wake();
      });
    }
  }

  private async deliver(request: CapturedRequest): Promise<void> {
    const label = `#${request.seq} ${toPrintable(request.method)} ${displayPath(request)}`;
    // Checked beside the forward (it needs only the stored bytes); printed under the request's line.
    const signature = this.options.verify === undefined ? undefined : checkSignature(this.options.verify, request);
    const print = async (line: string) => this.context.out(await withSignature(line, signature, this.options.display));
    let prepared: PreparedRequest;
    try {
      prepared = prepareForward(request, this.target);
    } catch (error) {
      if (!(error instanceof PathRefusal)) throw error;
      // Nothing is sent. Reported like any request not delivered, on its line and to the tabs,
      // with --to's own path as the target: the path it would have gone to is the problem.
      const reason = `refused: ${error.message}`;
      this.reporter.report(
        buildForwardedMessage(request.seq, `${this.target.protocol}//${this.target.host}${this.target.basePath}`, {
          ok: false,
          error: reason,
          ms: 0,
        }),
      );
      await print(formatForwardLine(request, { delivered: false, reason: toPrintable(reason) }));
      return;
    }
    const report = (result: ForwardResult) =>
      this.reporter.report(
        buildForwardedMessage(request.seq, `${this.target.protocol}//${this.target.host}${prepared.path}`, result),
      );
    for (let attempt = 0; ; attempt++) {
      const result = await this.client.send(prepared, this.cutInFlight.signal);
      if (result.ok) {
        // First, so the sender waits no longer than it must.
        this.options.answerSender(request, result);
        report(result);
        await print(formatForwardLine(request, { delivered: true, status: result.status, ms: result.ms }));
        return;
      }
      if (this.cutInFlight.signal.aborted) {
        this.unfinished.push(request.seq);
        await print(formatForwardLine(request, { delivered: false, reason: 'stopped' }));
        return;
      }
      if (!result.retryable || attempt >= this.options.retries) {
        const tries = attempt + 1;
        const reason = `${result.error}${tries > 1 ? `, ${tries} attempts` : ''}`;
        report({ ok: false, error: reason, ms: result.ms });
        this.context.err(`${label}: ${result.error}${result.retryable ? `; gave up after ${tries} attempt(s)` : ''}`);
        await print(formatForwardLine(request, { delivered: false, reason }));
        return;
      }
      const delay = backoffDelay(attempt);
      this.context.err(
        `${label}: ${result.error}; retry ${attempt + 1}/${this.options.retries} in ${formatSeconds(delay)}`,
      );
      if (!(await sleep(delay, this.noMoreRetries.signal))) {
        this.unfinished.push(request.seq);
        await print(formatForwardLine(request, { delivered: false, reason: 'stopped before retrying' }));
        return;
      }
    }
  }

  private changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** The request's line, and the signature verdict on its own line under it when one was asked for. */
async function withSignature(
  line: string,
  signature: Promise<SignatureCheck> | undefined,
  display: SignatureDisplay,
): Promise<string> {
  return signature === undefined ? line : `${line}\n${formatSignatureLine(await signature, display)}`;
}
