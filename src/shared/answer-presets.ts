/**
 * Ready-made answer rules: the providers' URL checks, which a provider
 * sends before it will deliver to a URL, and the answers a retry loop is tested with. The page's
 * preset menu offers them; docs/protocol.md shows each.
 */
import type { AnswerRule } from './answer-rules.js';

export interface AnswerPreset {
  id: string;
  /** As the menu says it. */
  label: string;
  /** The rule it adds; `n` (a count, a percentage or milliseconds) where the preset asks for one. */
  rule(n?: number): AnswerRule;
  /** What `n` means, for presets that take one, with its default. */
  parameter?: { label: string; default: number; min: number; max: number };
}

const text = (body: string) => ({ status: 200, contentType: 'text/plain' as const, body });

export const ANSWER_PRESETS: readonly AnswerPreset[] = [
  {
    id: 'slack',
    label: 'Slack URL verification',
    rule: () => ({
      name: 'Slack URL verification',
      when: { method: 'POST', json: { type: 'url_verification' } },
      answer: text('{{json.challenge}}'),
    }),
  },
  {
    id: 'meta',
    label: 'Meta, WhatsApp, Instagram (hub.challenge)',
    rule: () => ({
      name: 'Meta hub.challenge',
      when: { method: 'GET', query: { 'hub.mode': 'subscribe' } },
      answer: text('{{query.hub.challenge}}'),
    }),
  },
  {
    id: 'graph',
    label: 'Microsoft Graph (validationToken)',
    rule: () => ({
      name: 'Microsoft Graph validationToken',
      when: { query: { validationToken: '*' } },
      answer: text('{{query.validationToken}}'),
    }),
  },
  {
    id: 'twitch',
    label: 'Twitch EventSub verification',
    rule: () => ({
      name: 'Twitch EventSub verification',
      when: { method: 'POST', headers: { 'Twitch-Eventsub-Message-Type': 'webhook_callback_verification' } },
      answer: text('{{json.challenge}}'),
    }),
  },
  {
    id: 'dropbox',
    label: 'Dropbox (challenge)',
    rule: () => ({
      name: 'Dropbox challenge',
      when: { method: 'GET', query: { challenge: '*' } },
      answer: text('{{query.challenge}}'),
    }),
  },
  {
    id: 'okta',
    label: 'Okta event hook verification',
    rule: () => ({
      name: 'Okta verification',
      when: { method: 'GET', headers: { 'X-Okta-Verification-Challenge': '*' } },
      answer: {
        status: 200,
        contentType: 'application/json',
        body: '{"verification":"{{header.x-okta-verification-challenge}}"}',
      },
    }),
  },
  {
    id: 'asana',
    label: 'Asana (X-Hook-Secret handshake)',
    rule: () => ({
      name: 'Asana handshake',
      when: { headers: { 'X-Hook-Secret': '*' } },
      answer: { status: 200, headers: [['X-Hook-Secret', '{{header.x-hook-secret}}']], body: '' },
    }),
  },
  {
    id: 'fail-then-succeed',
    label: 'Fail N times, then succeed',
    parameter: { label: 'Failures', default: 3, min: 1, max: 1000 },
    rule: (n = 3) => ({
      name: `fail ${n} times first`,
      times: n,
      answer: { status: 503, headers: [['Retry-After', '5']], body: '' },
    }),
  },
  {
    id: 'fail-percent',
    label: 'Fail X % of requests',
    parameter: { label: 'Percent', default: 20, min: 1, max: 100 },
    rule: (n = 20) => ({ name: `fail ${n} %`, chance: n / 100, answer: { status: 500, body: '' } }),
  },
  {
    id: 'slow',
    label: 'Slow answer',
    parameter: { label: 'Delay (ms)', default: 5000, min: 1, max: 30_000 },
    rule: (n = 5000) => ({ name: `slow answer (${n} ms)`, answer: { status: 200, delayMs: n } }),
  },
];
