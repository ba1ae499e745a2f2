#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { takeAccessToken } from './access-token.js';
import { UsageError, type CommandContext } from './command.js';
import { redactKeys } from './share-link.js';

const USAGE = `Usage: hookwatch <command> [options]

Commands:
  forward <share-link> --to <url>   replay each new request to a local server, byte for byte
  tail <share-link>                 print each new request as it arrives
  wait <share-link> [filters]       wait for the first new request that matches; print it as JSON
  create [--server <base-url>]      create a live endpoint; print its URL and share link
                                    (server: --server, else $HOOKWATCH_SERVER, else http://localhost:8080);
                                    --kept [--name n] [--lifetime 7d] [--keep-secrets] for a kept one
  list                              the endpoints create made on this machine
  extend <link|name> --lifetime 7d  make a kept endpoint live that long from now
  delete <link|name>                delete an endpoint: its URL answers 404 from then on
  types <share-link> [--format f]   print a TypeScript type, zod schema or JSON Schema that
                                    accepts every JSON body the endpoint holds
  send --to <url> [--provider <p>]  sign and send a test event, as the provider would
  replay <share-link> <seq>         send a stored request again (--to, --edit, --secret to re-sign)

Every command that talks to the server takes --token <t> (or HOOKWATCH_TOKEN) for an instance
with ACCESS_MODE=token.

Run 'hookwatch <command> --help' for a command's options. Docs: docs/cli.md`;

type Command = (args: string[], context: CommandContext) => Promise<number>;
/**
 * Each command is imported only when it runs: together they pull in ws, node:http(s) and the
 * signature checks, which `--help` and `--version` have no use for.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  forward: async () => (await import('./forward.js')).runForward,
  tail: async () => (await import('./tail.js')).runTail,
  create: async () => (await import('./create.js')).runCreate,
  list: async () => (await import('./list.js')).runList,
  extend: async () => (await import('./extend.js')).runExtend,
  delete: async () => (await import('./delete.js')).runDelete,
  wait: async () => (await import('./wait.js')).runWait,
  types: async () => (await import('./types.js')).runTypes,
  send: async () => (await import('./send.js')).runSend,
  replay: async () => (await import('./replay.js')).runReplay,
};

/** The package version, read beside dist/ (or src/ under tsx). */
function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Reads all of stdin as text; at most 64 KiB, since it is only ever a share link. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > 64 * 1024) break;
  }
  process.stdin.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Builds the context: lines to stdout and stderr (stderr redacted, in case a link slips into an
 * error), and stop signals from SIGINT/SIGTERM. The process is never exited here: the exit
 * code is set and the process ends once the command has closed everything, so output that is
 * still being written to a pipe is not lost.
 */
function createContext(accessToken: string | undefined): { context: CommandContext; dispose: () => void } {
  const stop = new AbortController();
  const hardStop = new AbortController();
  let stdoutGone = false;
  const onSignal = () => {
    if (!stop.signal.aborted) {
      process.stderr.write('stopping… (press Ctrl-C again to stop at once)\n');
      stop.abort();
    } else hardStop.abort();
  };
  // A closed pipe (`hookwatch tail … | head`) means nobody reads on: stop like Ctrl-C.
  const onStdoutError = (error: NodeJS.ErrnoException) => {
    stdoutGone = true;
    if (error.code === 'EPIPE') stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.stdout.on('error', onStdoutError);
  const context: CommandContext = {
    out: (line) => {
      if (!stdoutGone) process.stdout.write(`${line}\n`);
    },
    err: (line) => process.stderr.write(`${redactKeys(line)}\n`),
    stopSignal: stop.signal,
    hardStopSignal: hardStop.signal,
    readStdin,
    accessToken,
  };
  const dispose = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  return { context, dispose };
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`hookwatch ${readVersion()}\n`);
    return 0;
  }
  if (name === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const loadCommand = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (loadCommand === undefined) {
    process.stderr.write(`hookwatch: unknown command '${redactKeys(name)}'\nRun 'hookwatch --help' for usage.\n`);
    return 2;
  }
  const command = await loadCommand();
  // `send` talks to the --to URL, never to a Hookwatch server: its arguments are all its own.
  let taken: { args: string[]; token: string | undefined } = { args, token: undefined };
  try {
    if (name !== 'send') taken = takeAccessToken(args, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`hookwatch ${name}: ${error.message}\nRun 'hookwatch ${name} --help' for usage.\n`);
    return 2;
  }
  const { context, dispose } = createContext(taken.token);
  try {
    return await command(taken.args, context);
  } catch (error) {
    if (error instanceof UsageError) {
      context.err(`hookwatch ${name}: ${error.message}\nRun 'hookwatch ${name} --help' for usage.`);
      return 2;
    }
    const { describeError } = await import('./send-request.js');
    context.err(`hookwatch ${name}: ${describeError(error)}`);
    return 1;
  } finally {
    dispose();
  }
}

process.exitCode = await main(process.argv.slice(2));
