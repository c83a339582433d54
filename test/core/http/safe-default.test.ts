import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { cleanEnv } from '../../helpers/app.ts';
import { runCli } from '../../helpers/cli.ts';

/** An address of this machine that is not loopback: a client from "the network". */
const lanAddress = Object.values(networkInterfaces()).flat().find((i) => i && !i.internal && i.family === 'IPv4')?.address;
const noLan = lanAddress ? false : 'this machine has no non-loopback IPv4 address to call from';

async function fresh(t: Tap, env: NodeJS.ProcessEnv) {
  const cwd = await mkdtemp(join(tmpdir(), 'core-safe-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const cli = await runCli(t, [], cleanEnv(env), cwd);
  return { ...cli, port: Number(new URL(cli.url).port) };
}
type Tap = { teardown(fn: () => unknown): void };

t.test('a fresh start with auth off listens on loopback only', async (t) => {
  // no config file; the default address has no host (`:8080`), here `:0` for a free port
  const cli = await fresh(t, { CORE_ADDRESS: ':0' });
  t.match(cli.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.match(cli.stderr(), /loopback only/);
  t.equal((await fetch(`${cli.url}/api/v3/config`)).status, 200, 'the local operator gets in');
  t.test('the network cannot reach it', { skip: noLan }, async (t) => {
    await t.rejects(fetch(`http://${lanAddress}:${cli.port}/api/v3/config`), 'connection refused');
  });
});

t.test('a written host is obeyed even with auth off', { skip: noLan }, async (t) => {
  const cli = await fresh(t, { CORE_ADDRESS: '0.0.0.0:0' });
  t.notMatch(cli.stderr(), /loopback only/);
  t.equal((await fetch(`http://${lanAddress}:${cli.port}/ping`)).status, 200);
});

t.test('with auth on it listens everywhere and refuses calls without a token; the spec stays readable', { skip: noLan }, async (t) => {
  const cli = await fresh(t, {
    CORE_ADDRESS: ':0', CORE_API_AUTH_ENABLE: 'true', CORE_API_AUTH_USERNAME: 'admin', CORE_API_AUTH_PASSWORD: 'secret-pw',
  });
  const lan = `http://${lanAddress}:${cli.port}`;
  const denied = await fetch(`${lan}/api/v3/config`);
  t.equal(denied.status, 401);
  t.equal((await fetch(`${lan}/api/v3/process`)).status, 401);
  const spec = await fetch(`${lan}/api/swagger/doc.json`);
  t.equal(spec.status, 200, 'the OpenAPI document needs no token');
  t.ok(((await spec.json()) as { paths: object }).paths);
  t.equal((await fetch(`${lan}/api/swagger/json`)).status, 200);
  t.equal((await fetch(`${lan}/api/swagger/static/index.html`)).status, 200, 'the Swagger UI needs no token');
  const login = await fetch(`${lan}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'secret-pw' }) });
  t.equal(login.status, 200);
  const { access_token: token } = await login.json() as { access_token: string };
  t.equal((await fetch(`${lan}/api/v3/config`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
});
