import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { placeholdersRef, type PlaceholderRegistry } from '../../../sdk/index.ts';
import { s3Entry, s3Unavailable, startS3 } from '../../helpers/s3.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../../plugins/rtmp/helpers.ts';
import { srtCaller } from '../../plugins/srt/srt-helpers.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { runPassphrase } from '../../../plugins/srt/run-scope.ts';

/*
 * Issue 43.4: no configured secret on a child's command line or in its environment. Every
 * placeholder at once (restreamer-ui's tee: HLS into memfs, RTMP and SRT publish; an egress
 * reading RTMP; a reader over SRT; HLS into an S3 mount with a password when the S3 test server
 * is there), then /proc of every descendant of the service is read. A run's credential read from
 * one child's command line opens that run's own outputs and nothing else, and nothing once it ended.
 */

const SECRETS = {
  api: 'api-pass-7c1e', jwt: 'jwt-secret-5d2a9', memfs: 'mem-pass-91fa', rtmp: 'rtmp-tok-3b77',
  srtToken: 'srt-tok-44c0', srtPass: 'srt-passphrase-0e19', s3Pass: 's3-mount-pass-8a2d',
};
const S3_KEYS: string[] = [];

const TEE = '[f=hls:start_number=0:hls_time=1:hls_list_size=4:hls_flags=append_list+delete_segments:hls_segment_filename={memfs^:}/{processid}_%04d.ts:method=PUT]{memfs}/{processid}.m3u8|[f=flv]{rtmp,name=pub.stream}|[f=mpegts]{srt,name=pub,mode=publish}';
const ENCODE = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p'];
const SOURCE = { id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] };

function processes(s3: boolean) {
  const list = [
    { id: 'pub', input: [SOURCE], output: [{ id: 'out', address: TEE, options: ['-map', '0:v', ...ENCODE, '-flags', '+global_header', '-f', 'tee'] }] },
    { id: 'egress', input: [{ id: 'in', address: '{rtmp,name=pub.stream}', options: [] }],
      output: [{ id: 'out', address: '{memfs}/egress.m3u8', options: ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3', '-method', 'PUT'] }] },
    { id: 'srtread', input: [{ id: 'in', address: '{srt,name=pub}', options: [] }], output: [{ id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] }] },
  ];
  if (s3) {
    list.push({ id: 'cloud', input: [SOURCE],
      output: [{ id: 'out', address: '{fs:cloud}/cloud.m3u8', options: [...ENCODE, '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3', '-method', 'PUT'] }] });
  }
  return list.map((p) => ({ ...p, reconnect: true, reconnect_delay_seconds: 1, autostart: true }));
}

/** Every descendant of this test process (the in-process service's children and theirs). */
function descendants(): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone meanwhile */ }
  }
  const under = (pid: number) => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...parent.keys()].filter(under);
}

const read = (path: string): string => { try { return readFileSync(path, 'latin1'); } catch { return ''; } };

async function startAll(t: TestLike): Promise<{ app: TestApp; login: { status: number; token: string }; s3: boolean }> {
  const s3 = !s3Unavailable();
  const storage: Record<string, unknown> = { memory: { auth: { enable: true, username: 'writer', password: SECRETS.memfs } } };
  if (s3) {
    const target = await startS3(t);
    S3_KEYS.push(target.accessKey, target.secret);
    storage.s3 = [s3Entry(target, { name: 'cloud', mountpoint: '/cloud', auth: { enable: true, username: 'up', password: SECRETS.s3Pass } })];
  }
  const app = await startApp(t, { config: {
    plugins: ['auth', 'disk-fs', 'memfs', 'rtmp', 'srt', ...(s3 ? ['s3-fs'] : [])],
    api: { auth: { enable: true, username: 'admin', password: SECRETS.api, jwt: { secret: SECRETS.jwt } } },
    storage,
    rtmp: { enable: true, address: '127.0.0.1:0', token: SECRETS.rtmp },
    srt: { enable: true, address: '127.0.0.1:0', token: SECRETS.srtToken, passphrase: SECRETS.srtPass },
  } });
  const login = await app.request('POST', '/api/login', { body: { username: 'admin', password: SECRETS.api } });
  return { app, login: { status: login.status, token: login.body.access_token }, s3 };
}

t.test('no configured secret reaches a child; a run\'s credential opens its own outputs only, while it runs', async (t) => {
  const { app, login: auth, s3 } = await startAll(t);
  t.equal(auth.status, 200, 'logged in');
  for (const p of processes(s3)) t.equal((await app.request('POST', '/api/v3/process', { body: p, token: auth.token })).status, 200, `add ${p.id}`);
  const ready = async (path: string) => (await app.request('GET', path)).status === 200;
  await waitFor(async () => (await ready('/memfs/pub.m3u8')) && (await ready('/memfs/egress.m3u8')) && (!s3 || (await ready('/cloud/cloud.m3u8'))),
    { timeout: 60_000, what: 'HLS of pub, egress and cloud' });
  await waitFor(async () => ((await app.request('GET', '/api/v3/srt', { token: auth.token })).body.subscriber?.pub ?? []).length > 0,
    { timeout: 30_000, what: 'the SRT reader' });

  // /proc of every descendant: ffmpegs, the SRT host
  const pids = descendants();
  const cmdlines = pids.map((p) => read(`/proc/${p}/cmdline`));
  t.ok(cmdlines.filter((c) => c.startsWith('ffmpeg') || c.includes('/ffmpeg\0')).length >= (s3 ? 4 : 3), `the processes' ffmpegs are there (${pids.length} descendants)`);
  const secrets = [...Object.values(SECRETS), ...S3_KEYS].flatMap((s) => [s, encodeURIComponent(s)]);
  for (const p of pids) {
    for (const file of ['cmdline', 'environ']) {
      const text = read(`/proc/${p}/${file}`);
      const found = secrets.filter((s) => text.includes(s));
      t.same(found, [], `/proc/${p}/${file} (${read(`/proc/${p}/cmdline`).split('\0').slice(0, 2).join(' ')}) holds no configured secret`);
    }
  }

  // pub's run credential, as any local user reads it from /proc: its HLS slave carries it as a
  // Basic header (core/process/preauth.ts), other outputs in their URLs
  const pubLine = cmdlines.find((c) => c.includes('/pub.m3u8'))!;
  const header = /Authorization\\*: Basic ([A-Za-z0-9+/=]+)/.exec(pubLine);
  const token = header
    ? /^process:pub:([\w-]{32})$/.exec(Buffer.from(header[1]!, 'base64').toString())![1]!
    : /process\\?:pub\\?:([\w-]{32})@/.exec(pubLine)![1]!;
  const basic = (path: string) => ({ authorization: `Basic ${Buffer.from(`process:pub:${token}`).toString('base64')}`, path });
  const put = (path: string) => app.request('PUT', path, { raw: 'x', headers: { authorization: basic(path).authorization } });
  t.equal((await put('/memfs/pub_probe.ts')).status, 201, 'it writes next to its own playlist');
  t.equal((await app.request('DELETE', '/memfs/pub_probe.ts', { headers: { authorization: basic('').authorization } })).status, 200, 'and deletes there');
  const other = await put('/memfs/egress.m3u8');
  t.equal(other.status, 403, 'not another process\'s output');
  t.equal(other.body.code, 403);
  if (s3) t.equal((await put('/cloud/cloud.m3u8')).status, 403, 'not another process\'s S3 output');
  t.equal((await app.request('GET', '/api/v3/process', { headers: { authorization: basic('').authorization } })).status, 401, 'not the API (Basic)');
  t.equal((await app.request('GET', '/api/v3/process', { token })).status, 401, 'not the API (Bearer)');

  const rtmpPort = (app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp;
  const publish = ffmpeg(t, ['-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-t', '3', ...ENCODE, '-f', 'flv',
    `rtmp://127.0.0.1:${rtmpPort}/other.stream?token=${token}`]);
  t.not(await publish.done, 0, 'not an RTMP publish of another name');
  t.notOk((await app.request('GET', '/api/v3/rtmp', { token: auth.token })).body.some((c: { name: string }) => c.name === '/other.stream'));
  t.throws(() => srtCaller(srtPort(app), `other,mode:publish,token:${token}`, runPassphrase(token)), { reject: 1403 } as never,
    'not an SRT publish of another name');

  const probe = await app.request('GET', '/api/v3/process/egress/probe', { token: auth.token });
  t.ok(probe.body.streams.length > 0, `a probe reads {rtmp} with a credential of its own (${JSON.stringify(probe.body.log).slice(-300)})`);

  // once its run ended the token is nothing
  t.equal((await app.request('PUT', '/api/v3/process/pub/command', { body: { command: 'stop' }, token: auth.token })).status, 200);
  await waitFor(async () => (await app.request('GET', '/api/v3/process/pub/state', { token: auth.token })).body.exec === 'finished',
    { timeout: 20_000, what: 'pub stopped' });
  t.equal((await put('/memfs/pub_probe.ts')).status, 401, 'its own paths refuse it after it stopped');
  const late = ffmpeg(t, ['-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-t', '3', ...ENCODE, '-f', 'flv',
    `rtmp://127.0.0.1:${rtmpPort}/pub.stream?token=${token}`]);
  t.not(await late.done, 0, 'and RTMP refuses it for its own stream');
});

/** The SRT listener's port, from the placeholder as a command that does not run shows it. */
function srtPort(app: TestApp): number {
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as PlaceholderRegistry;
  return Number(/:(\d+)\?/.exec(ph.get('srt')!.value('input'))![1]);
}
