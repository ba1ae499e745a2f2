/**
 * Every message the server sends on a live socket, built in one place so each has its
 * protocol type (schemas/live-messages.ts) and is serialised once.
 */
import type { ResponseConfig } from './schemas/response-config.js';
import type {
  EndpointInfo,
  ErrorMessage,
  ExpiredMessage,
  ExtendedMessage,
  ForwardedMessage,
  ResponderMessage,
  ResponseChangedMessage,
  WatchersMessage,
  WelcomeMessage,
} from './protocol.js';

const json = <T>(message: T): string => JSON.stringify(message);

export const welcomeMessage = (fields: Omit<WelcomeMessage, 'type'>): string =>
  json<WelcomeMessage>({ type: 'welcome', ...fields });

export function errorMessage(error: { code: string; message: string }, forType?: string): string {
  const message: ErrorMessage = { type: 'error', error: { code: error.code, message: error.message } };
  if (forType !== undefined) message.for = forType;
  return json(message);
}

export const EXPIRED_MESSAGE = json<ExpiredMessage>({ type: 'expired', reason: 'expired' });
export const DELETED_MESSAGE = json<ExpiredMessage>({ type: 'expired', reason: 'deleted' });

/** The `cleared` message up to its number, for the Redis scripts; elsewhere `clearedMessage`. */
export const CLEARED_MESSAGE_HEAD = '{"type":"cleared","clearedSeq":';
export const clearedMessage = (clearedSeq: number): string => `${CLEARED_MESSAGE_HEAD}${clearedSeq}}`;

/** The `removed` message up to its number, for the Redis scripts; elsewhere `removedMessage`. */
export const REMOVED_MESSAGE_HEAD = '{"type":"removed","seq":';
export const removedMessage = (seq: number): string => `${REMOVED_MESSAGE_HEAD}${seq}}`;

export const responseChangedMessage = (response: ResponseConfig): string =>
  json<ResponseChangedMessage>({ type: 'response', response });

export const extendedMessage = (expiresAt: string): string => json<ExtendedMessage>({ type: 'extended', expiresAt });

export const watchersMessage = (count: number): string => json<WatchersMessage>({ type: 'watchers', count });

export const responderMessage = (id: string | null, you?: boolean): string =>
  json<ResponderMessage>(you === undefined ? { type: 'responder', id } : { type: 'responder', id, you });

/** `answerJson`: the record's new `answer`, as JSON. */
export const answeredMessage = (seq: number, answerJson: string): string =>
  `{"type":"answered","seq":${seq},"answer":${answerJson}}`;

export const forwardedMessage = (message: ForwardedMessage): string => json<ForwardedMessage>(message);

export type { EndpointInfo };
