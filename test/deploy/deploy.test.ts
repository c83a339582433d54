import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const UNIT = readFileSync(join(ROOT, 'deploy/media-core.service'), 'utf8');
const DOCKERFILE = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');

/** `Key=value` lines of one [Section] of a unit file. */
function section(unit: string, name: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current = '';
  for (const raw of unit.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) { current = head[1]!; continue; }
    const eq = line.indexOf('=');
    if (current !== name || eq < 0) continue;
    const key = line.slice(0, eq);
    out.set(key, [...(out.get(key) ?? []), line.slice(eq + 1)]);
  }
  return out;
}

t.test('the systemd unit builds, then runs node on app/main.js directly, as a non-root user', async (t) => {
  const svc = section(UNIT, 'Service');
  const exec = svc.get('ExecStart')?.[0] ?? '';
  t.match(exec, /^\/\S+\/node_modules\/node\/bin\/node \S+\/app\/main\.js$/, 'no npm, shell or loader in between');
  t.match(svc.get('ExecStartPre')?.[0] ?? '', /node \S+\/scripts\/build\.mjs$/, 'a changed source is rebuilt by the next start');
  t.equal(svc.get('Type')?.[0], 'simple');
  t.ok(svc.get('User')?.[0] && svc.get('User')?.[0] !== 'root', 'not root');
  t.equal(svc.get('KillSignal')?.[0], 'SIGTERM', 'the signal the service shuts down gracefully on');
  t.equal(svc.get('KillMode')?.[0], 'mixed', 'SIGTERM to the service only: it stops its ffmpeg children itself');
  t.equal(svc.get('Restart')?.[0], 'on-failure');
  t.equal(section(UNIT, 'Install').get('WantedBy')?.[0], 'multi-user.target');
});

t.test('systemd-analyze verify accepts the unit (installed at this checkout)', async (t) => {
  const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) { t.pass('skip: systemd-analyze is not installed here (Debian package systemd)'); return; }
  const dir = await mkdtemp(join(tmpdir(), 'core-unit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'media-core.service');
  // verify checks that ExecStart's binary exists: point the unit at this checkout instead of /opt.
  await writeFile(path, UNIT.replaceAll('/opt/media-core', ROOT));
  const r = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.notMatch(r.stderr, /media-core\.service/, `no warnings about the unit: ${r.stderr}`);
});

/** Instructions of a Dockerfile, continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  const joined = text.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n').replace(/\\\n/g, ' ');
  return joined.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
    const sp = l.indexOf(' ');
    return { op: l.slice(0, sp).toUpperCase(), args: l.slice(sp + 1).trim() };
  });
}

t.test('the Dockerfile lints clean: pinned base, non-root, health check on /ping, exec-form CMD', async (t) => {
  const ins = instructions(DOCKERFILE);
  const from = ins.filter((i) => i.op === 'FROM');
  t.equal(from.length, 1);
  t.match(from[0]!.args, /^[\w./-]+(:\d[\w.-]*|@sha256:[0-9a-f]{64})$/, 'base image pinned to a version, never latest');
  const users = ins.filter((i) => i.op === 'USER');
  t.ok(users.length > 0 && !/^(root|0)$/.test(users.at(-1)!.args), 'runs as a non-root user');
  t.ok(ins.findIndex((i) => i.op === 'USER') < ins.findIndex((i) => i.op === 'CMD'), 'USER before CMD');
  t.match(ins.find((i) => i.op === 'HEALTHCHECK')?.args ?? '', /CMD .*\/ping/, 'health check on GET /ping');
  t.match(ins.find((i) => i.op === 'EXPOSE')?.args ?? '', /^\d+$/);
  const cmd = ins.filter((i) => i.op === 'CMD').at(-1)?.args ?? '';
  const argv = JSON.parse(cmd) as string[];
  t.match(argv[0], /node_modules\/node\/bin\/node$/, 'exec form: node itself is the container process');
  t.match(argv.at(-1), /app\/main\.js$/, 'the JavaScript built in the image');
  t.ok(ins.some((i) => i.op === 'RUN' && /scripts\/build\.mjs/.test(i.args)), 'built once at image build');
  t.notOk(ins.some((i) => i.op === 'ADD' && /https?:\/\//.test(i.args)), 'no ADD of URLs');
  t.notOk(ins.some((i) => i.op === 'RUN' && /apt-get install(?![^&]*--no-install-recommends)/.test(i.args)), 'apt-get install --no-install-recommends');
  t.ok(ins.some((i) => i.op === 'RUN' && /rm -rf \/var\/lib\/apt\/lists/.test(i.args)), 'apt lists removed in the same layer');
  t.notOk(ins.some((i) => i.op === 'RUN' && /\bsudo\b|\bcd /.test(i.args)), 'no sudo, WORKDIR instead of cd');
});

t.test('the Dockerfile copies every workspace manifest before npm ci', async (t) => {
  const ins = instructions(DOCKERFILE);
  const ci = ins.findIndex((i) => i.op === 'RUN' && /npm ci/.test(i.args));
  const copied = ins.slice(0, ci).filter((i) => i.op === 'COPY').map((i) => i.args.split(/\s+/)[0]);
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  for (const ws of root.workspaces) {
    const dirs = ws.endsWith('/*') ? readdirSync(join(ROOT, ws.slice(0, -2)), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'node_modules').map((d) => `${ws.slice(0, -2)}/${d.name}`) : [ws];
    for (const dir of dirs) t.ok(copied.includes(`${dir}/package.json`), `${dir}/package.json copied before npm ci`);
  }
  t.match(ins[ci]!.args, /SLIM[^]*--workspace @media-core\/sdk --include-workspace-root/, 'SLIM=1 builds the slim image');
});
