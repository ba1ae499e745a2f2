// The receiver's sub-path in the OpenAPI document (issue 34, item 20): said to hold slashes, for
// the tools that can send it so, and what a %2F becomes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/http.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('the OpenAPI document on receiver sub-paths', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ logLevel: 'warn' });
  });
  afterAll(() => server?.close());

  it('marks {subPath} as holding slashes and says how a generated client sends one', async () => {
    const document = JSON.parse((await send(`${server.baseUrl}/api/openapi.json`)).text) as {
      paths: Record<string, { parameters?: Array<Record<string, unknown>> }>;
    };
    for (const path of ['/api/webhook-tester/{id}/{subPath}', '/api/webhook-endpoint/{id}/{subPath}']) {
      const parameter = document.paths[path]?.parameters?.find((each) => each.name === 'subPath');
      expect(parameter?.['x-allow-reserved']).toBe(true);
      expect(parameter?.description).toMatch(/slashes included.*%2F.*captured as written/s);
    }
  });
});
