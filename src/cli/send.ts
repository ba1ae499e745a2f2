import { signRequest, type Provider } from '../shared/signatures/index.js';
import { parseCommandArgs, parseInteger, UsageError, type CommandContext } from './command.js';
import { parseHeaderOptions, setHeaders } from './extra-headers.js';
import { parseTarget, TargetError, type ForwardTarget } from './forward-request.js';
import { isSampleEvent, sampleEvent, sampleEventNames } from './sample-events.js';
import { INLINE_SECRET_NOTE, parseProvider, parseSecretOption } from './secret-option.js';
import { readBodySource, sendOnce, toPreparedHeaders } from './send-once.js';

export const SEND_USAGE = `Usage: hookwatch send --to <url> [--provider <p> --secret <s>] [--event <type>] [--header N=V]... [<body file> | -]

Sends one test event to <url>, signed the way the provider signs (fresh timestamp), with the
provider's usual headers (event type, delivery id, user agent). Without a body, a bundled sample
of --event is sent. <url> may be a Hookwatch receiver URL: its page's Verify then says valid.

  --to <url>            where to send (required), e.g. http://localhost:3000/webhook
  --provider <p>        github, stripe, slack, shopify or standard-webhooks
  --secret <s>          the signing secret; env:<NAME> reads it from that environment variable
  --event <type>        the event, e.g. push, checkout.session.completed (see the list below)
  --header <N=V>        add or replace a header (repeatable); signature headers are set last
  --method <M>          the method (default POST)
  --timeout <seconds>   how long to wait for the answer (default 30)
  <body file> | -       send this file's bytes (or stdin's) instead of a sample
  -h, --help            this text

Bundled events:
  github             push, ping, pull_request, issues
  stripe             checkout.session.completed, payment_intent.succeeded, invoice.paid,
                     customer.subscription.created
  slack              app_mention, message, url_verification
  shopify            orders/create, products/update, app/uninstalled
  standard-webhooks  invoice.paid, user.created

The answer (status, headers, body) goes to stdout. Exit 0 for an answer below 500, 1 for a 5xx
or when <url> cannot be reached, 2 for a usage error.`;

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;

export async function runSend(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      provider: { type: 'string' },
      secret: { type: 'string' },
      event: { type: 'string' },
      header: { type: 'string', multiple: true },
      method: { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.out(SEND_USAGE);
    return 0;
  }
  if (values.to === undefined)
    throw new UsageError('--to <url> is required (where to send, e.g. http://localhost:3000/webhook)');
  const target = toTarget(values.to);
  const provider = values.provider === undefined ? undefined : parseProvider(values.provider);
  if (provider === undefined && values.secret !== undefined)
    throw new UsageError('--secret goes with --provider (which scheme to sign with)');
  if (provider === undefined && values.event !== undefined)
    throw new UsageError('--event goes with --provider (whose event it is)');
  if (provider !== undefined && values.secret === undefined)
    throw new UsageError(`--provider ${provider} needs --secret <secret> (or --secret env:<NAME>) to sign with`);
  const secret = values.secret === undefined ? undefined : parseSecretOption(values.secret);
  if (positionals.length > 1) throw new UsageError(`expected at most one body file, got ${positionals.length}`);
  const method = (values.method ?? 'POST').toUpperCase();
  if (!METHOD.test(method)) throw new UsageError('--method is not a valid HTTP method');
  const timeoutMs = parseInteger(values.timeout ?? '30', '--timeout', 1, 3600) * 1000;
  const extra = parseHeaderOptions(values.header ?? []);
  const bodySource = positionals[0];
  if (
    provider !== undefined &&
    bodySource === undefined &&
    values.event !== undefined &&
    !isSampleEvent(provider, values.event)
  ) {
    throw new UsageError(
      `no bundled ${provider} event "${values.event}"; bundled: ${sampleEventNames(provider).join(', ')} (or give a body file)`,
    );
  }
  if (provider === undefined && bodySource === undefined)
    throw new UsageError(
      'nothing to send: give a body file (or - for stdin), or --provider for a bundled sample event',
    );
  if (secret?.source === 'inline') context.err(INLINE_SECRET_NOTE);

  const sample = provider === undefined ? undefined : sampleEvent(provider, values.event);
  const body = bodySource === undefined ? Buffer.from(sample?.body ?? '', 'utf8') : await readBodySource(bodySource);
  let headers = setHeaders(sample?.headers ?? [], extra);
  let what = 'unsigned';
  if (provider !== undefined && secret !== undefined) {
    const signed = await sign(provider, headers, body, secret.secret);
    headers = signed.headers;
    what = `as ${provider} ${sample?.event ?? ''}, signed (${signed.names.join(', ')})`;
  }
  context.err(`sending ${method} ${target.protocol}//${target.host}${pathOf(target)} ${what}`);
  return sendOnce(
    target,
    { method, path: pathOf(target), headers: toPreparedHeaders(target, headers, body.length), body },
    timeoutMs,
    context,
  );
}

async function sign(
  provider: Provider,
  headers: Array<[string, string]>,
  body: Buffer,
  secret: string,
): Promise<{ headers: Array<[string, string]>; names: string[] }> {
  const signed = await signRequest(provider, { headers, body: new Uint8Array(body) }, secret);
  if (!signed.ok) throw new UsageError(`--secret: ${signed.message}`);
  return { headers: signed.headers, names: signed.changed.map((change) => change.name) };
}

function toTarget(text: string): ForwardTarget {
  try {
    return parseTarget(text);
  } catch (error) {
    if (error instanceof TargetError) throw new UsageError(error.message);
    throw error;
  }
}

function pathOf(target: ForwardTarget): string {
  return target.baseQuery === '' ? target.basePath : `${target.basePath}?${target.baseQuery}`;
}
