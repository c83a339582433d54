import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import type { TestLike } from '../../helpers/app.ts';

/*
 * An identity provider on loopback for the login tests: a JWKS server with keys made here (a
 * stand-in for Auth0, which cannot run here), and tokens signed with them.
 */

export const AUDIENCE = 'https://api.example.test';
export const ALICE = 'auth0|alice';

export interface Idp {
  domain: string;
  sign(claims: Record<string, unknown>, opts?: { kid?: string | null; key?: CryptoKey; alg?: string }): Promise<string>;
  fetches: number;
}

/** A JWKS server on loopback with keys made here; its `domain` is a URL with scheme. */
export async function startIdp(t: TestLike, alg: 'RS256' | 'ES256'): Promise<Idp> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'key-1', alg, use: 'sig' };
  const idp = { domain: '', fetches: 0 } as Idp;
  const server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/jwks.json') {
      idp.fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  idp.domain = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  idp.sign = (claims, opts = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const header: Record<string, unknown> = { alg: opts.alg ?? alg, typ: 'JWT' };
    if (opts.kid !== null) header.kid = opts.kid ?? 'key-1';
    return new SignJWT({ iss: idp.domain, aud: [AUDIENCE, `${idp.domain}userinfo`], sub: ALICE, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader(header as { alg: string })
      .sign(opts.key ?? privateKey);
  };
  return idp;
}

