// A real OAuth 2.1 authorization server for the tests: npm `oidc-provider`
// (installed by .ci/run into .ci/npm/oidc-provider), configured with
// resource indicators (RFC 8707) that issue JWT access tokens, client
// credentials, dynamic registration and its development login/consent pages.
//
// Environment:
//   OIDC_PROVIDER_MODULE  path of oidc-provider's lib/index.js
//   HARNESS_KEYS_DIR      directory of the PEM test keys
//   HARNESS_KEYS          signing keys at start, comma-separated key names
//   HARNESS_ROTATED_KEYS  signing keys after POST /__test/rotate
//   HARNESS_PORT          port to listen on (0: any); binds 127.0.0.1 only
// Prints "ready <issuer>" once it listens.

import { createServer } from 'node:http';
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { default: Provider, errors } = await import(pathToFileURL(process.env.OIDC_PROVIDER_MODULE).href);

function keys(names) {
  return {
    keys: names.split(',').map((name) => ({
      ...createPrivateKey(readFileSync(join(process.env.HARNESS_KEYS_DIR, `${name}.pem`))).export({ format: 'jwk' }),
      kid: name,
      alg: 'RS256',
      use: 'sig',
    })),
  };
}

const loopback = (url) => /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(url);

function configuration(jwks) {
  return {
    jwks,
    clients: [
      {
        client_id: 'cc-client',
        client_secret: 'cc-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        // Its tokens are opaque: the resource server must introspect them.
        client_id: 'cc-opaque',
        client_secret: 'cc-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        // The MCP server itself, for token introspection (RFC 7662).
        client_id: 'mcp-resource-server',
        client_secret: 'rs-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        // Its tokens live two seconds: for the expiry test.
        client_id: 'cc-short',
        client_secret: 'cc-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    cookies: { keys: ['toolport-test-cookie-key'] },
    scopes: ['openid', 'offline_access', 'mcp:tools', 'files:write'],
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => {
          if (!loopback(resource)) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: 'mcp:tools files:write',
            audience: resource,
            accessTokenFormat: client.clientId === 'cc-opaque' ? 'opaque' : 'jwt',
            accessTokenTTL: client.clientId === 'cc-short' ? 2 : 300,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: {
      ClientCredentials: (ctx, token, client) => (client.clientId === 'cc-short' ? 2 : 300),
    },
  };
}

const server = createServer();
await new Promise((resolve) => server.listen(Number(process.env.HARNESS_PORT || 0), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const initial = new Provider(issuer, configuration(keys(process.env.HARNESS_KEYS)));
const rotated = new Provider(issuer, configuration(keys(process.env.HARNESS_ROTATED_KEYS || process.env.HARNESS_KEYS)));
let current = initial;
let handler = initial.callback();

server.on('request', (req, res) => {
  if (req.method === 'POST' && req.url === '/__test/rotate') {
    current = rotated;
    handler = rotated.callback();
    res.writeHead(204).end();
    return;
  }
  handler(req, res);
});
console.log(`ready ${issuer}`);
process.stdin.resume();
// The test holds stdin open; when it goes away, so does this server.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
void current;
