import t from 'tap';
import { PolicyError, PolicyIndex, type Decision } from '../../../plugins/iam/policy.ts';

/*
 * Issue 49, the pure part: decisions of the compiled policy index. Three users (a superuser, a
 * customer with a glob over their channels, one with a literal resource in a domain) times every
 * type, allowed and denied; actions without case, `*` and `any` for all; the domain as the
 * successor's `$none` when a request names none; unknown users and types denied; a user whose
 * new policies do not compile keeps the old ones.
 */

const index = new PolicyIndex([
  { name: 'root', superuser: true, policies: [] },
  {
    name: 'alice', policies: [
      { domain: '$none', types: ['rtmp', 'srt', 'webrtc', 'hls'], resource: 'live/customer-a/*', actions: ['PLAY', 'PUBLISH'] },
      { domain: '$none', types: ['api'], resource: '/api/v3/process/**', actions: ['GET'] },
      { domain: '$none', types: ['fs'], resource: '/memfs/customer-a/**', actions: ['GET', 'PUT', 'DELETE'] },
      { domain: '$none', types: ['process'], resource: 'customer-a-*', actions: ['read', 'command'] },
      { domain: '$none', types: ['iam'], resource: 'alice', actions: ['read'] },
    ],
  },
  {
    name: 'bob', policies: [
      { domain: 'tv', types: ['process'], resource: 'news', actions: ['*'] },
      { domain: 'tv*', types: ['rtmp'], resource: 'tv/news', actions: ['play'] },
      { domain: '', types: ['srt'], resource: 'bob', actions: ['any'] },
    ],
  },
]);

const q = (user: string, type: Decision['type'], resource: string, action: string, domain?: string): Decision => ({ user, type, resource, action, domain });

t.test('three users, every type, allowed and denied', async (t) => {
  const allowed: Decision[] = [
    q('root', 'iam', 'anyone', 'write'), q('root', 'process', 'x', 'command', 'other'), q('root', 'api', '/api/v3/config', 'PUT'),
    q('alice', 'rtmp', 'live/customer-a/cam', 'PUBLISH'), q('alice', 'srt', 'live/customer-a/cam', 'play'),
    q('alice', 'webrtc', 'live/customer-a/x', 'PLAY'), q('alice', 'hls', 'live/customer-a/x', 'PLAY'),
    q('alice', 'api', '/api/v3/process/customer-a-1/state', 'GET'), q('alice', 'fs', '/memfs/customer-a/x/index.m3u8', 'PUT'),
    q('alice', 'process', 'customer-a-1', 'read'), q('alice', 'process', 'customer-a-1', 'COMMAND'), q('alice', 'iam', 'alice', 'read'),
    q('bob', 'process', 'news', 'write', 'tv'), q('bob', 'rtmp', 'tv/news', 'PLAY', 'tv2'), q('bob', 'srt', 'bob', 'PUBLISH'),
    q('bob', 'srt', 'bob', 'PUBLISH', '$none'),
  ];
  const denied: Decision[] = [
    q('alice', 'rtmp', 'live/customer-b/cam', 'PUBLISH'), q('alice', 'rtmp', 'live/customer-a/cam/x', 'PLAY'),
    q('alice', 'api', '/api/v3/process/customer-a-1', 'DELETE'), q('alice', 'api', '/api/v3/config', 'GET'),
    q('alice', 'fs', '/memfs/customer-b/x', 'GET'), q('alice', 'fs', '/disk/customer-a/x', 'GET'),
    q('alice', 'process', 'customer-b-1', 'read'), q('alice', 'process', 'customer-a-1', 'write'),
    q('alice', 'process', 'customer-a-1', 'read', 'tv'), q('alice', 'iam', 'bob', 'read'), q('alice', 'iam', 'alice', 'write'),
    q('bob', 'process', 'news', 'write'), q('bob', 'process', 'news', 'write', 'radio'), q('bob', 'rtmp', 'tv/news', 'PUBLISH', 'tv'),
    q('bob', 'srt', 'bob', 'PLAY', 'tv'), q('bob', 'webrtc', 'bob', 'PLAY'),
    q('carol', 'rtmp', 'live/customer-a/cam', 'PLAY'),
  ];
  for (const d of allowed) t.ok(index.allowed(d), `allowed: ${JSON.stringify(d)}`);
  for (const d of denied) t.notOk(index.allowed(d), `denied: ${JSON.stringify(d)}`);
});

t.test('a policy that does not compile is refused, naming it; the user keeps the old ones', async (t) => {
  const ix = new PolicyIndex([{ name: 'u', policies: [{ domain: '$none', types: ['rtmp'], resource: 'a', actions: ['PLAY'] }] }]);
  let err: unknown;
  try {
    ix.set({ name: 'u', policies: [{ domain: '$none', types: ['rtmp'], resource: 'a', actions: ['PLAY'] }, { domain: '$none', types: ['rtmp'], resource: 'a[', actions: ['PLAY'] }] });
  } catch (e) {
    err = e;
  }
  t.ok(err instanceof PolicyError && err.index === 1, 'the second policy named');
  t.equal((err as Error).message, 'policies[1]: a glob that does not compile: a [ without its ]');
  t.throws(() => ix.set({ name: 'u', policies: [{ domain: '$none', types: ['ftp'], resource: 'a', actions: ['GET'] }] }), /policies\[0\]: unknown type 'ftp'/);
  t.ok(ix.allowed(q('u', 'rtmp', 'a', 'PLAY')), 'the old policies still decide');
  ix.delete('u');
  t.notOk(ix.allowed(q('u', 'rtmp', 'a', 'PLAY')), 'a deleted user may nothing');
  t.equal(ix.size, 0);
});
