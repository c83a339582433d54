import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { request, type Requester } from '../../../helpers/app.ts';
import { makeChain } from '../../../helpers/certs.ts';
import { startCli, type CliApp } from '../../../helpers/cli.ts';
import { runOnce } from './helpers.ts';

/*
 * Issue 26: a process cannot read the service's secrets (config file, db.dir, TLS key, the service's
 * environment), whichever way it names them. Each attempt copies the bytes it can read, unchanged,
 * into the disk root (raw 8-bit audio in, raw out), where the test looks for the secret.
 */

const PASSWORD = 'pw-marker-4711-never-readable';
const ENV_SECRET = 'env-marker-0815-never-readable';
const META = 'db-marker-2342-never-readable';

async function service(t: { teardown(fn: () => unknown): void }, env: NodeJS.ProcessEnv = {}): Promise<{ cli: CliApp; app: Requester; key: string }> {
  const keys = mkdtempSync(join(tmpdir(), 'core-keys-'));
  t.teardown(() => rmSync(keys, { recursive: true, force: true }));
  const chain = makeChain(keys);
  const cli = await startCli(t, { api: { auth: { password: PASSWORD } }, tls: { cert_file: chain.certFile, key_file: chain.keyFile } },
    { env: { SECRET_MARKER: ENV_SECRET, ...env } });
  const app: Requester = { request: (method, path, opts) => request(cli.url, method, path, opts) };
  const put = await app.request('PUT', '/api/v3/metadata/marker', { body: META });
  if (put.status !== 200) throw new Error(`a secret in db.json: ${put.status} ${put.text}`);
  return { cli, app, key: chain.keyFile };
}

/** Raw bytes in, the same bytes out into the disk root. */
function copy(from: string, to: string) {
  return { input: [{ id: 'in', address: from, options: ['-f', 'u8', '-ar', '8000', '-ac', '1'] }], output: [{ id: 'out', address: `{diskfs}/${to}`, options: ['-f', 'u8'] }] };
}

function routes(cli: CliApp, key: string): [string, string][] {
  const pid = cli.child.pid!;
  const config = join(cli.dir, 'config.json');
  return [
    ['the config file', config],
    ['the config file, climbing from the disk root', join(cli.dir, 'disk', '..', 'config.json')],
    ['the config file through a link in the disk root', join(cli.dir, 'disk', 'cfg-link')],
    ['the config file through the service\'s root in /proc', `/proc/${pid}/root${config}`],
    ['db.json', join(cli.dir, 'db', 'db.json')],
    ['the TLS key', key],
    ['the service\'s environment', `/proc/${pid}/environ`],
  ];
}

function leaked(cli: CliApp, name: string): string {
  const p = join(cli.dir, 'disk', name);
  return existsSync(p) ? readFileSync(p, 'latin1') : '';
}

t.test('no way of naming a secret reads it', async (t) => {
  const { cli, app, key } = await service(t);
  symlinkSync(join(cli.dir, 'config.json'), join(cli.dir, 'disk', 'cfg-link'));
  const list = routes(cli, key);
  for (const [i, [what, from]] of list.entries()) {
    const r = await runOnce(app, `r${i}`, copy(from, `leak${i}.raw`));
    t.equal(r.status, 200, `${what}: the API takes it (inputs are not restricted, as in the reference)`);
    const got = leaked(cli, `leak${i}.raw`);
    for (const secret of [PASSWORD, META, ENV_SECRET, 'PRIVATE KEY']) t.notOk(got.includes(secret), `${what}: no secret (${got.length} bytes)`);
  }
  // what is not secret stays readable
  const ok = await runOnce(app, 'public', copy('/etc/hostname', 'hostname.raw'));
  t.equal(ok.status, 200);
  t.equal(leaked(cli, 'hostname.raw'), readFileSync('/etc/hostname', 'latin1'), 'an ordinary file reads as before');
});

t.test('without confinement every one of these routes leaks (the test sees each leak)', async (t) => {
  const { cli, app, key } = await service(t, { MEDIA_CORE_CONFINE_WRAPPER: '/nonexistent/media-core-confine' });
  symlinkSync(join(cli.dir, 'config.json'), join(cli.dir, 'disk', 'cfg-link'));
  for (const [i, [what, from]] of routes(cli, key).entries()) {
    await runOnce(app, `c${i}`, copy(from, `control${i}.raw`));
    const got = leaked(cli, `control${i}.raw`);
    t.ok([PASSWORD, META, ENV_SECRET, 'PRIVATE KEY'].some((s) => got.includes(s)), `${what}: leaks unconfined`);
  }
});
