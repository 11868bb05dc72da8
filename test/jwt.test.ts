import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { io as connect } from 'socket.io-client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { defineCollection, defineModule, field, jwtAuthenticator } from '../src/internal.js';
import { adminToken, call, signUp, startAccountsServer } from './helpers/accounts.js';

/** An identity provider's key set, served over HTTP by the test. */
async function serveKeys(keys: JWK[]): Promise<{ url: string; fetches: () => number; server: Server }> {
  let fetches = 0;
  const server = createServer((_request, response) => {
    fetches++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    fetches: () => fetches,
    server,
  };
}

async function keyPair(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** Tasks owned by callers of the identity provider: their ids are not users records, so the owner is text. */
const tasks = defineCollection({
  name: 'tasks',
  fields: { title: field.text(), owner: field.text({ readOnly: true, indexed: true }) },
  access: { list: 'owner', read: 'owner', create: 'owner', update: 'owner', delete: 'owner' },
});
const tasksModule = defineModule({ name: 'tasks', collections: [tasks] });

const issuer = 'https://id.example.test/';
const audience = 'notes-api';

function sign(
  key: { privateKey: CryptoKey; kid: string },
  claims: { sub?: string; aud?: string; iss?: string; exp?: number | string; email?: string } = {},
) {
  const jwt = new SignJWT(claims.email ? { email: claims.email } : {})
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setIssuedAt()
    .setIssuer(claims.iss ?? issuer)
    .setAudience(claims.aud ?? audience)
    .setExpirationTime(claims.exp ?? '10m');
  if (claims.sub !== '') jwt.setSubject(claims.sub ?? 'user-from-idp-1');
  return jwt.sign(key.privateKey);
}

describe('a JWT authenticator beside Berth’s accounts', () => {
  it('accepts a valid token and refuses an expired one, a wrong audience or issuer, and a wrong key; accounts still work', async () => {
    const good = await keyPair('key-1');
    const stranger = await keyPair('key-1');
    const keys = await serveKeys([good.jwk]);
    const server = await startAccountsServer({
      authenticators: [jwtAuthenticator({ jwksUrl: keys.url, issuer, audience })],
      modules: [tasksModule],
    });
    const { url } = server;

    const valid = await sign(good, { email: 'grace@example.org' });
    const me = await call<Record<string, unknown>>(url, 'GET', '/auth/me', { token: valid });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ id: 'user-from-idp-1', via: 'jwt', email: 'grace@example.org' });

    // Its caller owns what it creates, and rules apply to it as to any user.
    const note = await call<{ owner: string }>(url, 'POST', '/tasks', {
      token: valid,
      json: { title: 'from the idp' },
    });
    expect(note.status).toBe(201);
    expect(note.body.owner).toBe('user-from-idp-1');
    const other = await sign(good, { sub: 'user-from-idp-2' });
    expect((await call<{ total: number }>(url, 'GET', '/tasks', { token: other })).body.total).toBe(0);
    expect((await call<{ total: number }>(url, 'GET', '/tasks', { token: valid })).body.total).toBe(1);
    // A collection whose owner is a users record cannot take a caller who is none, and says why.
    const notUser = await call<{ detail: string; developerHint: string }>(url, 'POST', '/notes', {
      token: valid,
      json: { title: 'x' },
    });
    expect(notUser.status).toBe(403);
    expect(notUser.body.detail).toBe(
      'this caller may not create notes: only users own them, and this caller (via jwt) is not one of them',
    );
    // How to change the declaration: a developer hint, answered in debug mode (the tests' mode).
    expect(notUser.body.developerHint).toContain('owner: field.text({ readOnly: true })');

    expect(
      (await call(url, 'POST', '/books', { token: valid, json: { title: 'x', author: 'y' } })).status,
    ).toBe(403);

    const refused = {
      expired: await sign(good, { exp: Math.floor(Date.now() / 1000) - 60 }),
      'wrong audience': await sign(good, { aud: 'another-api' }),
      'wrong issuer': await sign(good, { iss: 'https://evil.example.test/' }),
      'wrong key': await sign(stranger),
      'no subject': await sign(good, { sub: '' }),
    };
    for (const [what, token] of Object.entries(refused)) {
      const answer = await call<{ detail: string }>(url, 'GET', '/auth/me', { token });
      expect({ what, status: answer.status, detail: answer.body.detail }).toEqual({
        what,
        status: 401,
        detail: 'the token is not valid: it may have expired or been revoked',
      });
    }
    // Public routes ignore a token nobody accepts.
    expect((await call(url, 'GET', '/books', { token: refused.expired })).status).toBe(200);

    // Side by side: Berth's own accounts and the admin token.
    const ada = await signUp(url, 'ada@example.org');
    expect((await call<{ email: string }>(url, 'GET', '/auth/me', { token: ada.token })).body.email).toBe(
      'ada@example.org',
    );
    expect((await call(url, 'GET', '/users', { token: adminToken })).status).toBe(200);
    // A JWT whose subject equals a user's id owns nothing of theirs: ids of different authenticators never meet.
    const posing = await sign(good, { sub: ada.id });
    expect((await call(url, 'GET', `/users/${ada.id}`, { token: posing })).status).toBe(403);
    expect(
      (await call(url, 'PATCH', `/users/${ada.id}`, { token: posing, json: { name: 'x' } })).status,
    ).toBe(403);
    expect((await call(url, 'GET', '/auth/me', { token: posing })).body).not.toHaveProperty('email');
    // A JWT is no session to log out.
    expect((await call<{ code: string }>(url, 'POST', '/auth/logout', { token: valid })).body.code).toBe(
      'ACCOUNTS_NOT_A_SESSION',
    );
    // Keys are fetched once, not per request.
    expect(keys.fetches()).toBeLessThanOrEqual(2);
  });

  it('a provider answering 500 is a 503 on routes that need a caller; public routes go on without one', async () => {
    const good = await keyPair('key-1');
    let failing = true;
    const server = createServer((_request, response) => {
      response.writeHead(failing ? 500 : 200, { 'content-type': 'application/json' });
      response.end(failing ? '{"error":"down"}' : JSON.stringify({ keys: [good.jwk] }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
    const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    const berth = await startAccountsServer({
      authenticators: [jwtAuthenticator({ jwksUrl, issuer, audience })],
    });
    const token = await sign(good);
    const down = await call<{ code: string }>(berth.url, 'GET', '/auth/me', { token });
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('BERTH_UNAVAILABLE');
    expect((await call(berth.url, 'GET', '/books', { token })).status).toBe(200);
    failing = false;
    // jose waits a cooldown before fetching again; a fresh authenticator fetches at once.
    const recovered = await startAccountsServer({
      authenticators: [jwtAuthenticator({ jwksUrl, issuer, audience })],
    });
    expect((await call(recovered.url, 'GET', '/auth/me', { token })).status).toBe(200);
  });

  it('a token without an expiry is refused', async () => {
    const good = await keyPair('key-1');
    const keys = await serveKeys([good.jwk]);
    const server = await startAccountsServer({
      authenticators: [jwtAuthenticator({ jwksUrl: keys.url, issuer, audience })],
    });
    const forever = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: good.kid })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject('user-from-idp-1')
      .sign(good.privateKey);
    expect((await call(server.url, 'GET', '/auth/me', { token: forever })).status).toBe(401);
  });

  it('an unreachable identity provider is a 503 that names it, not a bad token', async () => {
    const good = await keyPair('key-1');
    const keys = await serveKeys([good.jwk]);
    keys.server.close();
    keys.server.closeAllConnections();
    const server = await startAccountsServer({
      authenticators: [jwtAuthenticator({ jwksUrl: keys.url, issuer, audience })],
    });
    const answer = await call<{ code: string; developerHint: string }>(server.url, 'GET', '/auth/me', {
      token: await sign(good),
    });
    expect(answer.status).toBe(503);
    expect(answer.body.code).toBe('BERTH_UNAVAILABLE');
    expect(answer.body.developerHint).toContain(keys.url);
    // Over realtime the same outage fails that subscribe, and nothing else: the server stays up.
    const socket = connect(server.url, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: { token: await sign(good) },
    });
    await new Promise<void>((done) => socket.once('connect', () => done()));
    expect(await socket.emitWithAck('subscribe', 'books')).toEqual({
      ok: false,
      code: 503,
      error: 'the token cannot be checked right now: try again shortly',
    });
    socket.disconnect();
    expect((await call(server.url, 'GET', '/books')).status).toBe(200);
  });
});
