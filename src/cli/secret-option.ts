import { PROVIDERS, type Provider } from '../shared/signatures/index.js';
import { UsageError } from './command.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `--provider`'s value, or a usage error listing the ones there are. */
export function parseProvider(text: string): Provider {
  if ((PROVIDERS as readonly string[]).includes(text)) return text as Provider;
  throw new UsageError(`--provider must be one of ${PROVIDERS.join(', ')}`);
}

/** A signing secret and where it came from: an inline one is worth a warning (`ps` shows it). */
export interface SecretOption {
  secret: string;
  source: 'inline' | 'env';
}

/**
 * Reads `--secret <value>` or `--secret env:<NAME>` (the variable's value). Messages never quote
 * the value: a mistyped one is still all secret, and messages end up in terminals and CI logs.
 */
export function parseSecretOption(text: string, env: NodeJS.ProcessEnv = process.env): SecretOption {
  if (text.startsWith('env:')) {
    const name = text.slice('env:'.length);
    if (!ENV_NAME.test(name))
      throw new UsageError('--secret env:<NAME> needs an environment variable name (letters, digits, _)');
    const secret = env[name];
    if (secret === undefined || secret.trim() === '')
      throw new UsageError(
        `--secret: the environment variable ${name} is not set or is empty, so there is no secret to sign with`,
      );
    return { secret, source: 'env' };
  }
  if (text.trim() === '')
    throw new UsageError('--secret is empty; give the signing secret, or env:<NAME> to read it from the environment');
  return { secret: text, source: 'inline' };
}

export const INLINE_SECRET_NOTE =
  'note: a secret given on the command line is visible to other users of this machine (ps); --secret env:<NAME> reads it from an environment variable instead';
