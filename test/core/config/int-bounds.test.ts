import t from 'tap';
import { startApp } from '../../helpers/app.ts';

/*
 * Integer keys take what their consumers can hold: a value the API accepted but the service could
 * not start with (an SRT limit beyond libsrt's int) or one stored as another number (1e308,
 * 2^53 + 1) is a config error, and so is text with NUL or a lone surrogate; nothing is stored.
 */

t.test('integers beyond a key\'s bound or beyond 2^53 - 1, NUL and lone surrogates are refused, and nothing is stored', async (t) => {
  const app = await startApp(t);
  const before = (await app.request('GET', '/api/v3/config')).body.config;
  const cases: Array<[string, Record<string, unknown>]> = [
    ['srt.max_connections', { srt: { max_connections: 2147483648 } }],
    ['srt.max_connections_per_address', { srt: { max_connections_per_address: 1_000_001 } }],
    ['log.max_lines', { log: { max_lines: 1e308 } }],
    ['encoder.max_processes', { encoder: { max_processes: 2 ** 53 + 2 } }],
    ['db.max_metadata_mbytes', { db: { max_metadata_mbytes: 9007199254740992 } }],
  ];
  for (const [key, body] of cases) {
    const r = await app.request('PUT', '/api/v3/config', { body });
    t.ok(r.status === 400 || r.status === 409, `${key}: ${r.status}`);
    t.match(JSON.stringify(r.body), new RegExp(key.split('.').pop()!), `${key}: the key is named`);
  }
  for (const [key, body] of [
    ['id', { id: '\ud800' }], ['name', { name: 'a\u0000b' }], ['api.auth.username', { api: { auth: { username: 'ad\u0000min' } } }],
    ['storage.cors.origins.1', { storage: { cors: { origins: ['*', 'x\udc00'] } } }],
  ] as const) {
    const r = await app.request('PUT', '/api/v3/config', { body });
    t.equal(r.status, 400, `${key}: NUL or a lone surrogate is refused`);
    t.match(r.body.details?.join(' ') ?? JSON.stringify(r.body), new RegExp(key.replace(/\./g, '\\.')), `${key}: named`);
  }
  t.equal((await app.request('PUT', '/api/v3/config', { body: { srt: { max_connections: 1_000_000 }, log: { max_lines: 2 ** 53 - 1 }, name: 'caf\u00e9 \ud83c\udfa5' } })).status, 200, 'the bounds themselves and any well-formed text are taken');
  const after = (await app.request('GET', '/api/v3/config')).body.config;
  t.equal(after.srt.max_connections, 1_000_000);
  t.same({ ...after, srt: before.srt, log: before.log, name: before.name, created_at: before.created_at, updated_at: before.updated_at }, { ...before, created_at: before.created_at, updated_at: before.updated_at }, 'nothing else changed');
});

t.test('a value stored before the rule does not block a PUT of the whole config read back', async (t) => {
  const app = await startApp(t, { config: { name: 'old\u0000name' } });
  const read = (await app.request('GET', '/api/v3/config')).body.config;
  t.equal(read.name, 'old\u0000name', 'the file\'s value is read as it is');
  const r = await app.request('PUT', '/api/v3/config', { body: { ...read, log: { ...read.log, max_lines: 2000 } } });
  t.equal(r.status, 200, 'the whole config sent back with one field changed');
  t.equal((await app.request('PUT', '/api/v3/config', { body: { name: 'new\u0000name' } })).status, 400, 'a new such value is refused');
});
