import t, { type Test } from 'tap';
import { join } from 'node:path';
import { readdir, stat, writeFile } from 'node:fs/promises';
import { s3Entry, s3Unavailable, startS3, type S3Target } from '../helpers/s3.ts';
import { SseClient } from '../plugins/events/sse-client.ts';
import { egressProcess, ingestProcess, pythonConfigBody, settingsLoad, settingsSave } from './clients.ts';
import { ADMIN, llhlsUrl, rtmpUrl, srtUrl, startJourney, tracks, waitFor, type Journey } from './kit.ts';

/*
 * Issue 44.6: the whole service as operators run it. One service (the CLI) with every built-in
 * plugin on, driven in the order its clients drive it: restreamer-ui starts and saves its Settings,
 * a channel is made (ingest with the tee that publishes it over RTMP and SRT, HLS into memfs), two
 * egress processes relay it with `-map 0:0`/`-map 0:1`, the Python client updates the config and
 * reloads, a recording is cut, sessions, metrics, events, GraphQL and the widget answer, an IAM
 * user of the channel sees and commands only its processes, and a restart keeps processes,
 * metadata, recordings and users. Each step checks the documented answer.
 */

const CHANNEL = '4186b095-7f0a-4e94-8c3b-f7b12c6b6c5a';
const INGEST = `restreamer-ui:ingest:${CHANNEL}`;
const EGRESS = { rtmp: `restreamer-ui:egress:rtmp:${CHANNEL}`, srt: `restreamer-ui:egress:srt:${CHANNEL}` };
const FILES = { rtmp: 'egress-rtmp.flv', srt: 'egress-srt.ts' };
const BOTH = ['video', 'audio'];
const enc = encodeURIComponent;

let s3: S3Target | undefined;
const noS3 = s3Unavailable();

t.test('restreamer-ui, the Python client and a channel on one service with every plugin on, then a restart', async (t) => {
  if (!noS3) s3 = await startS3(t);
  const j = await startJourney(t, () => (s3 ? { storage: { s3: [s3Entry(s3, { name: 'cloud', mountpoint: '/cloud' })] } } : {}));
  await t.test('restreamer-ui starts: about, login, skills, config, its metadata', (t) => uiStart(t, j));
  await t.test('restreamer-ui Settings: load the config, change a field, PUT the whole object back', (t) => uiSettings(t, j));
  await t.test('a channel: the ingest with its tee (HLS, RTMP, SRT) and its metadata', (t) => channel(t, j));
  await t.test('egress processes read the publication with -map 0:0 / -map 0:1: video first', (t) => egress(t, j));
  await t.test('the Python client: partial config update, then reload', (t) => python(t, j));
  await t.test('a recording of the channel and a cut of it', (t) => recording(t, j));
  await t.test('sessions, metrics, GraphQL, widget and events', (t) => observers(t, j));
  await t.test('S3: the filesystem listed, written and read', { skip: noS3 }, (t) => s3Files(t, j));
  await t.test('IAM: a user of the channel logs in and sees and commands only its processes', (t) => iamUser(t, j));
  await t.test('a restart (SIGTERM, a new process on the same config and db) keeps everything', (t) => restart(t, j));
});

async function uiStart(t: Test, j: Journey): Promise<void> {
  const anon = await j.run.req('GET', '/api', { token: '' });
  t.equal(anon.status, 200, 'GET /api without a token');
  t.same(Object.keys(anon.body).sort(), ['app', 'auths', 'version'], 'answers only app, auths and version');
  const login = await j.run.req('POST', '/api/login', { body: ADMIN, token: '' });
  t.equal(login.status, 200, 'POST /api/login');
  t.type(login.body.access_token, 'string');
  t.type(login.body.refresh_token, 'string');
  const about = await j.run.req('GET', '/api', { token: login.body.access_token });
  t.equal(about.body.name, 'journey', 'GET /api with the token: the whole About');
  t.match(about.body, { id: String, version: { number: String } });
  const skills = await j.run.req('GET', '/api/v3/skills');
  t.equal(skills.status, 200, 'GET /api/v3/skills');
  t.match(skills.body.ffmpeg.version, /^\d+\.\d+/);
  const config = await j.run.req('GET', '/api/v3/config');
  t.equal(config.status, 200, 'GET /api/v3/config');
  t.match(config.body, { config: { version: 3, name: 'journey' }, created_at: String, loaded_at: String, updated_at: String });
  const meta = await j.run.req('GET', '/api/v3/metadata/restreamer-ui');
  t.equal(meta.status, 404, 'its global metadata is not there on a first start');
  t.same(meta.body, { code: 404, message: 'Metadata not found', details: ['unknown key'] });
  const list = await j.run.req('GET', `/api/v3/process?idpattern=${enc('restreamer-ui:*')}&filter=config,state,metadata`);
  t.same([list.status, list.body], [200, []], 'no channel yet');
  const put = await j.run.req('PUT', '/api/v3/metadata/restreamer-ui', { body: { version: 1, bundle: { appversion: '2.12.0' } } });
  t.same([put.status, put.body], [200, { version: 1, bundle: { appversion: '2.12.0' } }], 'it stores its own metadata');
}

async function uiSettings(t: Test, j: Journey): Promise<void> {
  const shown = (await j.run.req('GET', '/api/v3/config')).body.config;
  const form = settingsLoad(shown);
  form.name = 'journey-renamed';
  form.log.max_lines = 2000;
  const put = await j.run.req('PUT', '/api/v3/config', { body: settingsSave(form) });
  t.equal(put.status, 200, `the Settings save is stored (${put.text.slice(0, 300)})`);
  const after = (await j.run.req('GET', '/api/v3/config')).body.config;
  t.same([after.name, after.log.max_lines], ['journey-renamed', 2000], 'GET /api/v3/config shows the change');
  t.same([after.address, after.rtmp.address, after.srt.address], [`:${j.ports.http}`, `:${j.ports.rtmp}`, `:${j.ports.srt}`], 'the listeners as they were');
  const again = await j.run.req('PUT', '/api/v3/config', { body: settingsSave(settingsLoad(after)) });
  t.equal(again.status, 200, `a second save of the page, unchanged, too (${again.text.slice(0, 200)})`);
}

async function channel(t: Test, j: Journey): Promise<void> {
  const add = await j.run.req('POST', '/api/v3/process', { body: ingestProcess(CHANNEL) });
  t.equal(add.status, 200, `POST /api/v3/process: the ingest (${add.text.slice(0, 300)})`);
  t.equal(add.body.id, INGEST);
  const meta = { name: 'Journey channel', meta: { author: { name: 'journey' } }, control: { hls: { segmentDuration: 2 } } };
  t.same((await j.run.req('PUT', `/api/v3/process/${enc(INGEST)}/metadata/restreamer-ui`, { body: meta })).body, meta, 'its metadata');
  await waitFor(async () => (await j.run.req('GET', '/api/v3/rtmp')).body.some?.((s: { name: string }) => s.name === `/${CHANNEL}.stream`),
    { timeout: 40_000, what: 'the tee\'s RTMP publication' });
  t.pass(`GET /api/v3/rtmp lists /${CHANNEL}.stream`);
  await waitFor(async () => Object.keys((await j.run.req('GET', '/api/v3/srt')).body.publisher ?? {}).includes(CHANNEL),
    { timeout: 40_000, what: 'the tee\'s SRT publication' });
  t.pass(`GET /api/v3/srt lists ${CHANNEL} as a publisher`);
  // the sessions plugin answers a first request with a playlist naming the same one with a session id
  const playlist = await waitFor(async () => {
    let r = await j.run.req('GET', `/memfs/${CHANNEL}.m3u8`, { token: '' });
    const session = /^(\S+\.m3u8\?session=\S+)$/m.exec(r.text)?.[1];
    if (r.status === 200 && session) r = await j.run.req('GET', `/memfs/${session}`, { token: '' });
    return r.status === 200 && new RegExp(`${CHANNEL}_\\d{4}\\.ts`).test(r.text) ? r.text : undefined;
  }, { timeout: 40_000, what: 'the HLS playlist in memfs' });
  const segment = new RegExp(`${CHANNEL}_\\d{4}\\.ts`).exec(playlist)![0];
  const seg = await fetch(`${j.run.url}/memfs/${segment}`);
  t.equal(seg.status, 200, `GET /memfs/${segment}: the HLS plays from memfs`);
  t.same(await tracks(t, `${j.run.url}/memfs/${CHANNEL}.m3u8`), BOTH, 'and carries video #0, audio #1');
  const state = (await j.run.req('GET', `/api/v3/process/${enc(INGEST)}/state`)).body;
  t.equal(state.exec, 'running', 'the ingest runs');
}

async function egress(t: Test, j: Journey): Promise<void> {
  for (const kind of ['rtmp', 'srt'] as const) {
    const add = await j.run.req('POST', '/api/v3/process', { body: egressProcess(CHANNEL, kind, FILES[kind]) });
    t.equal(add.status, 200, `POST /api/v3/process: the ${kind} egress (${add.text.slice(0, 200)})`);
  }
  for (const kind of ['rtmp', 'srt'] as const) {
    const file = join(j.dir, 'disk', FILES[kind]);
    await waitFor(async () => (await stat(file)).size > 30_000, { timeout: 40_000, what: `the ${kind} egress writing` }).catch(async (err: Error) => {
      const state = (await j.run.req('GET', `/api/v3/process/${enc(EGRESS[kind])}/state`)).body;
      const log = ((await j.run.req('GET', `/api/v3/process/${enc(EGRESS[kind])}/report`)).body.log ?? []) as string[][];
      const output = log.filter((l) => /Output #0|rror/.test(l[1] ?? '')).map((l) => l[1]).join(' / ');
      throw new Error(`${err.message} (${state.exec}: ${state.last_logline}; ${output}; disk: ${(await readdir(join(j.dir, 'disk'))).join(', ')})`);
    });
    t.same(await tracks(t, file), BOTH, `the ${kind} egress's -map 0:0 is the video and -map 0:1 the audio`);
  }
  // and read directly, as a player or a restream target would: the channel over RTMP and SRT
  t.same(await tracks(t, rtmpUrl(j, `${CHANNEL}.stream`)), BOTH, 'the channel read over RTMP: video #0, audio #1');
  t.same(await tracks(t, srtUrl(j, CHANNEL)), BOTH, 'the channel read over SRT: video #0, audio #1');
}

async function python(t: Test, j: Journey): Promise<void> {
  const put = await j.run.req('PUT', '/api/v3/config', { body: pythonConfigBody(ADMIN.username, ADMIN.password) });
  t.equal(put.status, 200, `the Python client's partial PUT /api/v3/config (${put.text.slice(0, 300)})`);
  const reload = await j.run.req('GET', '/api/v3/config/reload');
  t.same([reload.status, reload.body], [200, 'OK'], 'GET /api/v3/config/reload');
  j.run.token = await waitFor(() => j.run.login().catch(() => undefined), { timeout: 30_000, what: 'the reloaded service' });
  const cfg = (await j.run.req('GET', '/api/v3/config')).body.config;
  t.same([cfg.name, cfg.sessions.ip_ignorelist], ['journey-renamed', []], 'the reloaded service runs the stored config');
  for (const id of [INGEST, EGRESS.rtmp, EGRESS.srt]) {
    await waitFor(async () => (await j.run.req('GET', `/api/v3/process/${enc(id)}/state`)).body.exec === 'running', { timeout: 40_000, what: `${id} running again` });
  }
  t.pass('the channel and its egress processes run again');
}

async function recording(t: Test, j: Journey): Promise<void> {
  const filesystem = s3 ? 'cloud' : 'disk';
  const add = await j.run.req('POST', '/api/v3/recordings', { body: { name: 'channel', stream: `${CHANNEL}.stream`, filesystem, segment_seconds: 1 } });
  t.equal(add.status, 201, `POST /api/v3/recordings (${add.text.slice(0, 200)})`);
  t.match(add.body, { name: 'channel', stream: `${CHANNEL}.stream`, filesystem, segment_seconds: 1 });
  const view = await waitFor(async () => {
    const r = (await j.run.req('GET', '/api/v3/recordings/channel')).body;
    return r.segments >= 4 && r.spans?.length ? r : undefined;
  }, { timeout: 40_000, what: 'four segments recorded' });
  t.equal(view.recording, true, 'it is reading its stream');
  const cut = await fetch(`${j.run.url}/api/v3/recordings/channel/get?start=${view.spans[0].start_ms}&duration=2&format=ts`, { headers: { authorization: `Bearer ${j.run.token}` } });
  t.equal(cut.status, 200, 'GET /api/v3/recordings/channel/get: the cut');
  t.equal(cut.headers.get('content-type'), 'video/mp2t');
  t.match(cut.headers.get('x-recording-start'), /^\d{4}-\d\d-\d\dT/, 'X-Recording-Start');
  const file = join(j.dir, 'cut.ts');
  await writeFile(file, Buffer.from(await cut.arrayBuffer()));
  t.same(await tracks(t, file), BOTH, 'the cut holds video #0 and audio #1');
  const vod = await j.run.req('GET', '/api/v3/recordings/channel/playlist.m3u8');
  t.equal(vod.status, 200, 'GET /api/v3/recordings/channel/playlist.m3u8: the recorded time as an HLS VOD playlist');
  t.match(vod.text, /#EXT-X-PLAYLIST-TYPE:VOD\n/);
  t.same(await tracks(t, llhlsUrl(j, `${CHANNEL}.stream`, 'dvr.m3u8')), BOTH, 'the DVR playlist (LL-HLS) plays the recording: video #0, audio #1');
  t.same(await tracks(t, llhlsUrl(j, `${CHANNEL}.stream`)), BOTH, 'and the channel plays as LL-HLS');
}

async function observers(t: Test, j: Journey): Promise<void> {
  await fetch(`${j.run.url}/memfs/${CHANNEL}.m3u8`).then((r) => r.text());
  const sessions = await j.run.req('GET', '/api/v3/session?collectors=hls,rtmp,srt');
  t.equal(sessions.status, 200, 'GET /api/v3/session');
  t.same(Object.keys(sessions.body).sort(), ['hls', 'rtmp', 'srt']);
  const active = await waitFor(async () => {
    const r = (await j.run.req('GET', '/api/v3/session/active?collectors=rtmp,srt')).body;
    return r.rtmp?.length > 0 && r.srt?.length > 0 ? r : undefined;
  }, { what: 'active RTMP and SRT sessions' });
  t.pass(`GET /api/v3/session/active: ${active.rtmp.length} RTMP and ${active.srt.length} SRT sessions of the channel`);
  const metrics = await j.run.req('POST', '/api/v3/metrics', { body: { timerange_sec: 10, interval_sec: 1, metrics: [{ name: 'ffmpeg_process', labels: {} }, { name: 'mem_total' }] } });
  t.equal(metrics.status, 200, `POST /api/v3/metrics (${metrics.text.slice(0, 200)})`);
  t.ok(metrics.body.metrics.some((m: { name: string; values: unknown[] }) => m.name === 'mem_total' && m.values.length > 0), 'mem_total sampled');
  const prom = await fetch(`${j.run.url}/metrics`);
  t.equal(prom.status, 200, 'GET /metrics (Prometheus)');
  t.match(await prom.text(), /ffmpeg_process\{/, 'lists the processes');
  const gql = await j.run.req('POST', '/api/graph/query', { body: { query: '{ processes { id reference } }' } });
  t.equal(gql.status, 200, 'POST /api/graph/query');
  t.same(gql.body.data.processes.map((p: { id: string }) => p.id).sort(), [EGRESS.rtmp, EGRESS.srt, INGEST].sort(), 'GraphQL lists the processes');
  const widget = await j.run.req('GET', `/api/v3/widget/process/${enc(INGEST)}`, { token: '' });
  t.equal(widget.status, 200, 'the widget, without a credential');
  t.same(Object.keys(widget.body).sort(), ['current_sessions', 'total_sessions', 'uptime']);
  const sse = await SseClient.open(`${j.run.url}/api/v3/events?last_event_id=0`, { authorization: `Bearer ${j.run.token}` });
  t.teardown(() => sse.close());
  t.equal(sse.status, 200, 'GET /api/v3/events (the whole history)');
  for (const type of ['config.changed', 'config.reloaded', 'process.added', 'process.state', 'ingest.publish.start', 'ingest.play.start', 'recording.started']) {
    await sse.next((e) => e.type === type, type, 5000);
    t.pass(`the events held ${type}`);
  }
  const added = sse.events.filter((e) => e.type === 'process.added').map((e) => e.subject.process).sort();
  t.same(added, [EGRESS.rtmp, EGRESS.srt, INGEST].sort(), 'process.added for each process');
}

async function s3Files(t: Test, j: Journey): Promise<void> {
  const fs = (await j.run.req('GET', '/api/v3/fs')).body as { name: string; type: string; mount: string }[];
  t.match(fs.find((f) => f.name === 'cloud'), { name: 'cloud', type: 's3' }, 'GET /api/v3/fs lists the S3 filesystem');
  const put = await j.run.req('PUT', '/api/v3/fs/cloud/journey/hello.txt', { raw: 'hello', headers: { 'content-type': 'application/data' } });
  t.ok([201, 204].includes(put.status), `PUT /api/v3/fs/cloud/...: ${put.status}`);
  t.equal((await j.run.req('GET', '/api/v3/fs/cloud/journey/hello.txt')).text, 'hello', 'and read back');
  const list = (await j.run.req('GET', '/api/v3/fs/cloud?glob=/recordings/**')).body as { name: string }[];
  t.ok(list.length >= 4, `the recording's segments are in S3 (${list.length})`);
}

/** The channel's operator (issue 49): api and process policies for the channel's egress processes only, and a key to play the channel. */
const OPERATOR_KEY = 'operator-key-5c0e9a7b31d2f846';
const OPERATOR = {
  name: 'channel-operator',
  auth: { api: { userpass: { enable: true, password: 'operator password 0123' } }, services: { token: [OPERATOR_KEY], session: ['operator-session-secret-7a21c9'] } },
  policies: [
    { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['GET', 'PUT'] },
    { types: ['process'], resource: 'restreamer-ui:egress:*', actions: ['read', 'command'] },
    { types: ['rtmp', 'srt'], resource: `${CHANNEL}.stream`, actions: ['PLAY'] },
    { types: ['api'], resource: '/api/v3/session/token/channel-operator', actions: ['PUT'] },
    { types: ['fs'], resource: `/memfs/${CHANNEL}*`, actions: ['GET'] },
  ],
};

async function iamUser(t: Test, j: Journey): Promise<void> {
  const made = await j.run.req('POST', '/api/v3/iam/user', { body: OPERATOR });
  t.equal(made.status, 200, `the superuser adds the user (${made.text.slice(0, 200)})`);
  const login = await j.run.req('POST', '/api/login', { body: { username: OPERATOR.name, password: OPERATOR.auth.api.userpass.password }, token: '' });
  t.equal(login.status, 200, 'the user logs in at POST /api/login');
  const token = login.body.access_token as string;
  const list = (await j.run.req('GET', '/api/v3/process', { token })).body as { id: string }[];
  t.same(list.map((p) => p.id).sort(), [EGRESS.rtmp, EGRESS.srt].sort(), 'its list: the egress processes only');
  t.equal((await j.run.req('GET', `/api/v3/process/${enc(INGEST)}/state`, { token })).status, 403, 'not the ingest');
  t.equal((await j.run.req('PUT', `/api/v3/process/${enc(EGRESS.srt)}/command`, { body: { command: 'restart' }, token })).status, 200, 'a command to its egress');
  t.equal((await j.run.req('GET', '/api/v3/config', { token })).status, 403, 'not the config');
  t.equal((await j.run.req('GET', '/api/v3/iam/user', { token })).status, 403, 'nor the users');
  // its key plays the channel over RTMP (the stream table's admission decides it), not another name
  const keyed = (name: string) => rtmpUrl(j, name).replace(/\?token=.*$/, `?token=${OPERATOR.name}:${OPERATOR_KEY}`);
  t.same(await tracks(t, keyed(`${CHANNEL}.stream`)), BOTH, 'its key plays the channel over RTMP');
  t.same(await tracks(t, keyed(`${CHANNEL}.other`), 10_000), [], 'and nothing its policies do not name');
  // strangers no longer read memfs; its viewers read the channel's HLS with a session token it asks for
  t.equal((await j.run.req('PUT', '/api/v3/iam/user/$anon/policy', { body: [] })).status, 200, 'the superuser narrows $anon');
  t.equal((await j.run.req('GET', `/memfs/${CHANNEL}.m3u8`, { token: '' })).status, 401, 'a stranger gets the Basic challenge');
  const asked = await j.run.req('PUT', `/api/v3/session/token/${OPERATOR.name}`, { body: [{ match: `/memfs/${CHANNEL}*`, ttl_sec: 600 }], token });
  t.equal(asked.status, 200, `it asks for a session token (${asked.text.slice(0, 120)})`);
  const viewer = `${j.run.url}/memfs/${CHANNEL}.m3u8?token=${asked.body[0].token as string}`;
  t.same(await tracks(t, viewer), BOTH, 'a player with it plays the channel\'s HLS');
}

async function restart(t: Test, j: Journey): Promise<void> {
  const before = (await j.run.req('GET', '/api/v3/recordings/channel')).body;
  t.equal(await j.restart(), 0, 'SIGTERM: the service exits with 0');
  const list = (await j.run.req('GET', '/api/v3/process?filter=metadata')).body as { id: string; metadata: Record<string, unknown> | null }[];
  t.same(list.map((p) => p.id).sort(), [EGRESS.rtmp, EGRESS.srt, INGEST].sort(), 'the processes are back');
  t.match(list.find((p) => p.id === INGEST)!.metadata, { 'restreamer-ui': { name: 'Journey channel' } }, 'with their metadata');
  t.same((await j.run.req('GET', '/api/v3/metadata/restreamer-ui')).body, { version: 1, bundle: { appversion: '2.12.0' } }, 'and the global metadata');
  const rec = (await j.run.req('GET', '/api/v3/recordings/channel')).body;
  t.ok(rec.segments >= before.segments, `the recording and its index (${rec.segments} segments, ${before.segments} before)`);
  t.equal((await j.run.req('GET', '/api/v3/config')).body.config.name, 'journey-renamed', 'the saved config');
  t.match((await j.run.req('GET', `/api/v3/iam/user/${OPERATOR.name}`)).body, { name: OPERATOR.name, policies: [{ resource: '/api/v3/process{,/**}' }, {}] }, 'and the IAM user');
  t.equal((await j.run.req('POST', '/api/login', { body: { username: OPERATOR.name, password: OPERATOR.auth.api.userpass.password }, token: '' })).status, 200, 'who logs in again');
  await waitFor(async () => (await j.run.req('GET', `/api/v3/process/${enc(INGEST)}/state`)).body.exec === 'running', { timeout: 40_000, what: 'the channel running again' });
  t.pass('the channel runs again');
}
