/**
 * Every message the server sends on a live socket, built in one place so each has its
 * protocol type (protocol.ts) and is serialised once.
 */
import type { ResponseConfig } from '../shared/response-config.js';
import type {
  ClearedMessage,
  EndpointInfo,
  ErrorMessage,
  ExpiredMessage,
  ForwardedMessage,
  ResponseChangedMessage,
  WatchersMessage,
  WelcomeMessage,
} from '../shared/protocol.js';

const json = <T>(message: T): string => JSON.stringify(message);

export const welcomeMessage = (fields: Omit<WelcomeMessage, 'type'>): string => json<WelcomeMessage>({ type: 'welcome', ...fields });

export function errorMessage(error: { code: string; message: string }, forType?: string): string {
  const message: ErrorMessage = { type: 'error', error: { code: error.code, message: error.message } };
  if (forType !== undefined) message.for = forType;
  return json(message);
}

export const EXPIRED_MESSAGE = json<ExpiredMessage>({ type: 'expired' });

export const clearedMessage = (clearedSeq: number): string => json<ClearedMessage>({ type: 'cleared', clearedSeq });

export const responseChangedMessage = (response: ResponseConfig): string => json<ResponseChangedMessage>({ type: 'response', response });

export const watchersMessage = (count: number): string => json<WatchersMessage>({ type: 'watchers', count });


export const forwardedMessage = (message: ForwardedMessage): string => json<ForwardedMessage>(message);

export type { EndpointInfo };
