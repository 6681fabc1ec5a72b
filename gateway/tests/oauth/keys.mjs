// Signing keys for the OAuth tests, as private JWKs on stdout:
//   node keys.mjs KID:TYPE…   (TYPE: rsa, ec, ed)
// e.g. `node keys.mjs k1:rsa e1:ec d1:ed` prints {"keys": [three JWKs]}.
import { generateKeyPairSync } from 'node:crypto';

const algs = { rsa: 'RS256', ec: 'ES256', ed: 'EdDSA' };
const keys = process.argv.slice(2).map((spec) => {
  const [kid, type] = spec.split(':');
  const { privateKey } =
    type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: algs[type] };
});
console.log(JSON.stringify({ keys }));
