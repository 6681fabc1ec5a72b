// A real OAuth 2.1 authorization server for the gateway's tests: the npm
// package `oidc-provider` (pinned in .ci/node.sh), configured for the
// client-credentials grant with resource indicators (RFC 8707), so a token
// asked for a resource is an RS256 JWT whose `aud` is that resource.
//
//   node issuer.mjs CONFIG.json
//
// CONFIG: {"port": 0, "keys": {"keys": [JWK with private parts…]},
//          "resources": {"<url>": {"scope": "tools:call"}},
//          "clients": [{"client_id", "client_secret", "claims": {…}, "alg"}]}
// Each client's `claims` are added to its access tokens (organisation, user,
// agent…), which are signed with its `alg` (RS256 when absent; the key set
// must hold a key for it). `port` 0 picks a free one; a restart on the same
// port with other keys is a key rotation. Prints `issuer <url>` on stdout once it listens; stops on SIGTERM.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';

const modules = process.env.DRAGNET_NODE_MODULES;
if (!modules) {
  console.error('DRAGNET_NODE_MODULES is not set (bash .ci/node.sh prints it)');
  process.exit(2);
}
const { default: Provider } = await import(path.join(modules, 'oidc-provider', 'lib', 'index.js'));
const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));

const server = createServer();
await new Promise((ready) => server.listen(config.port ?? 0, '127.0.0.1', ready));
const issuer = `http://127.0.0.1:${server.address().port}`;
const claimsOf = new Map(config.clients.map((c) => [c.client_id, c.claims ?? {}]));
const algOf = new Map(config.clients.map((c) => [c.client_id, c.alg ?? 'RS256']));

const provider = new Provider(issuer, {
  jwks: config.keys,
  clients: config.clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_post',
  })),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource, client) => {
        const known = config.resources[resource];
        if (!known) throw new Provider.errors.InvalidTarget();
        return {
          audience: resource,
          scope: known.scope,
          accessTokenTTL: known.ttl ?? 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: algOf.get(client.clientId) ?? 'RS256' } },
        };
      },
    },
  },
  extraTokenClaims: (_ctx, token) => claimsOf.get(token.clientId) ?? {},
});
server.on('request', provider.callback());
console.log(`issuer ${issuer}`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
