import t from 'tap';
import { validateWebrtc, WebrtcConfig } from '../../../plugins/webrtc/schema.ts';
import { Value } from '@sinclair/typebox/value';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { ndcViewer, SOURCE, startWebrtcApp, withMedia } from './helpers.ts';

const config = (over: Record<string, unknown>) => Value.Default(WebrtcConfig, { ...over }) as WebrtcConfig;

t.test('config rules: a port range needs both ends in order, ICE servers are stun/turn URLs, public addresses are IPs', async (t) => {
  t.same(validateWebrtc(config({})), {}, 'the defaults pass');
  t.same(Object.keys(validateWebrtc(config({ udp_port_min: 40000 }))), ['udp_port_min']);
  t.same(Object.keys(validateWebrtc(config({ udp_port_min: 40010, udp_port_max: 40000 }))), ['udp_port_max']);
  // the forms are the schema's (sdk/config/formats.ts): a 400 naming the item at PUT
  const formErrors = (over: Record<string, unknown>) => [...Value.Errors(WebrtcConfig, config(over))].map((e) => e.path);
  t.same(formErrors({ ice_servers: ['stun:stun.example:3478', 'http://x'] }), ['/ice_servers/1']);
  t.same(formErrors({ public_addresses: ['203.0.113.5', '2001:db8::1', 'example.com'] }), ['/public_addresses/2']);
  t.same(formErrors({ bind_address: '127.0.0.1:5000' }), ['/bind_address'], 'an address with a port where an IP is meant');
  t.same(validateWebrtc(config({ udp_port_min: 40000, udp_port_max: 40100, ice_servers: ['turn:u:p@turn.example:3478'] })), {});
});

t.test('the answer offers the configured UDP range and the public address, and media flows from that range', async (t) => {
  const min = 20000 + Math.floor(Math.random() * 20000);
  const app = await startWebrtcApp(t, { udp_port_min: min, udp_port_max: min + 50, public_addresses: ['192.0.2.7'] });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/range`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const v = await ndcViewer(t, app.url, 'live/range');
  t.equal(v.status, 201);
  const candidates = v.answer!.split(/\r?\n/).filter((l) => l.startsWith('a=candidate:'));
  const local = candidates.filter((l) => / 127\.0\.0\.1 /.test(l)).map((l) => Number(l.split(' ')[5]));
  t.ok(local.length > 0 && local.every((p) => p >= min && p <= min + 50), `loopback candidates in ${min}-${min + 50}: ${local.join(', ')}`);
  t.ok(candidates.some((l) => / 192\.0\.2\.7 /.test(l) && Number(l.split(' ')[5]) === local[0]), 'the public address on the same port');
  await withMedia(t, app.url, 'live/range', [v], 25);
  t.pass('media flows');
});
