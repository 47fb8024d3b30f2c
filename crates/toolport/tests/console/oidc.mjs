// An authorization server for the console's sign-in test: npm
// `oidc-provider` (installed by .ci/run into .ci/npm/oidc-provider) with
// resource indicators issuing JWT access tokens, its development login and
// consent pages, and the console registered as a public client (PKCE, no
// secret) whose browser calls are allowed by CORS.
//
// Environment:
//   OIDC_PROVIDER_MODULE  path of oidc-provider's lib/index.js
//   HARNESS_KEY           a PEM signing key
//   CONSOLE_REDIRECT      the console's redirect URI (<origin>/ui/callback)
// Binds 127.0.0.1 on a free port; prints "ready <issuer>" once it listens.

import { createServer } from 'node:http';
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const { default: Provider, errors } = await import(pathToFileURL(process.env.OIDC_PROVIDER_MODULE).href);

const key = {
  ...createPrivateKey(readFileSync(process.env.HARNESS_KEY)).export({ format: 'jwk' }),
  kid: 'console-test', alg: 'RS256', use: 'sig',
};
const redirect = process.env.CONSOLE_REDIRECT;
const consoleOrigin = new URL(redirect).origin;
const loopback = (url) => /^http:\/\/127\.0\.0\.1(:\d+)?\//.test(url);

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const provider = new Provider(issuer, {
  jwks: { keys: [key] },
  clients: [{
    client_id: 'toolport-console',
    application_type: 'web',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: [redirect],
  }],
  clientBasedCORS: (ctx, origin, client) => client.clientId === 'toolport-console' && origin === consoleOrigin,
  pkce: { required: () => true },
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  cookies: { keys: ['toolport-console-test-cookie-key'] },
  scopes: ['openid', 'mcp:tools', 'demo:book'],
  features: {
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (!loopback(resource)) throw new errors.InvalidTarget();
        return { scope: 'mcp:tools demo:book', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
});
server.on('request', provider.callback());
console.log(`ready ${issuer}`);
process.stdin.resume();
// The test holds stdin open; when it goes away, so does this server.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
