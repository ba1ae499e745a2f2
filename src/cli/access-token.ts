import { UsageError } from './command.js';

/**
 * The access token of an instance with ACCESS_MODE=token (docs/deploy.md#who-may-create-and-watch):
 * `--token <t>` anywhere in a command's options, else HOOKWATCH_TOKEN. Taken out of the arguments
 * before the command parses its own, so every command that talks to the server takes it. The
 * environment variable keeps it out of `ps`, which shows every user the arguments of every process.
 */
export function takeAccessToken(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { args: string[]; token: string | undefined } {
  const rest: string[] = [];
  let token: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    // After `--` everything is a positional, a share link or a body.
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg === '--token') {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--'))
        throw new UsageError('--token takes the access token (or set HOOKWATCH_TOKEN)');
      token = value;
      i++;
    } else if (arg.startsWith('--token=')) token = arg.slice('--token='.length);
    else rest.push(arg);
  }
  token ??= env.HOOKWATCH_TOKEN?.trim() || undefined;
  if (token !== undefined && !/^[\x21-\x7e]{1,1024}$/.test(token))
    throw new UsageError('the access token must be 1-1024 printable characters without spaces');
  return { args: rest, token };
}
