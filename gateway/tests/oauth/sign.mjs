// Signs a JWT the way a (possibly hostile) issuer would, for tokens the
// authorization server would never issue (expired, not yet valid, another
// audience, another issuer's key):
//   node sign.mjs KEYS.json KID HEADER.json PAYLOAD.json
// The header's `alg` decides the signature: RS256, ES256 or EdDSA with the
// private JWK `KID` of KEYS.json; HS256 with the RAW bytes of that key's
// PUBLIC JWK (the key-confusion attack); `none` with an empty signature.
import { createHmac, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [keysFile, kid, headerJson, payloadJson] = process.argv.slice(2);
const jwk = JSON.parse(readFileSync(keysFile, 'utf8')).keys.find((k) => k.kid === kid);
const header = JSON.parse(headerJson);
const b64 = (data) => Buffer.from(data).toString('base64url');
const input = `${b64(JSON.stringify(header))}.${b64(payloadJson)}`;
let signature;
switch (header.alg) {
  case 'RS256':
    signature = sign('sha256', Buffer.from(input), createPrivateKey({ key: jwk, format: 'jwk' }));
    break;
  case 'ES256':
    signature = sign('sha256', Buffer.from(input), {
      key: createPrivateKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363',
    });
    break;
  case 'EdDSA':
    signature = sign(null, Buffer.from(input), createPrivateKey({ key: jwk, format: 'jwk' }));
    break;
  case 'HS256': {
    const pub = createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'jwk' });
    signature = createHmac('sha256', JSON.stringify(pub)).update(input).digest();
    break;
  }
  default:
    signature = Buffer.alloc(0);
}
console.log(`${input}.${b64(signature)}`);
