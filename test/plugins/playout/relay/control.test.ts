import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Relay, RelayError } from '../../../../plugins/playout/relay/index.ts';
import type { TestLike } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { alive, capture, dtsSteps, freePort, log, meanColor, probePackets, pushInto, stillImage, tempDir, videoSize } from './media.ts';

async function relayOn(t: TestLike, src: number, errorframe?: Buffer): Promise<Relay> {
  const url = `tcp://127.0.0.1:${src}?listen=1`;
  const relay = new Relay({ id: `playout:${url}`, url, inputOptions: [], port: await freePort(), ffmpeg: plainFfmpeg, label: 'ctl', log, errorframe });
  t.teardown(() => relay.stop());
  await relay.start();
  return relay;
}

function portOf(relay: Relay): number {
  return (relay.status().debug as { port: number }).port;
}

t.test('the error frame is the image set, the keyframe decodes, reopen reads the source again', async (t) => {
  const dir = tempDir(t);
  const src = await freePort();
  const relay = await relayOn(t, src);
  await t.rejects(relay.setErrorframe(Buffer.from('not an image')), { name: 'RelayError', code: 'bad_image' });
  const running = () => relay.status().input.state === 'running';
  let pusher = await pushInto(t, src, running);
  await waitFor(() => relay.status().gop !== '', { timeout: 30_000, what: 'a complete GOP' });

  const jpg = await relay.keyframe('jpg');
  t.ok(jpg && jpg[0] === 0xff && jpg[1] === 0xd8, 'jpg keyframe');
  const png = await relay.keyframe('png');
  t.ok(png && png.readUInt32BE(0) === 0x89504e47, 'png keyframe');
  writeFileSync(join(dir, 'key.png'), png!);
  t.equal(videoSize(join(dir, 'key.png')), '320x240', 'the keyframe has the source size');

  await relay.encodeErrorframe(); // queued after any encode in flight: the count is settled after it
  const enc = relay.status().enc;
  await relay.setErrorframe(stillImage('red'));
  t.equal(relay.status().enc, enc + 1, 'setting the image re-encodes the clip');
  await relay.encodeErrorframe();
  t.equal(relay.status().enc, enc + 2, 'encode re-encodes it again');

  await pusher.kill();
  await waitFor(() => relay.status().looping, { timeout: 30_000, what: 'looping' });
  const out = capture(t, portOf(relay));
  const dup = relay.status().dup;
  await waitFor(() => relay.status().dup > dup + 30, { timeout: 30_000, what: 'error frames' });
  out.close();
  writeFileSync(join(dir, 'loop.ts'), out.bytes());
  t.equal(videoSize(join(dir, 'loop.ts')), '320x240', 'the error frame has the source size');
  const [r, g, b] = meanColor(join(dir, 'loop.ts'));
  t.ok(r! > 200 && g! < 60 && b! < 60, `the consumer sees the red image (${r},${g},${b})`);

  pusher = await pushInto(t, src, running);
  const pid = relay.pids()[0];
  relay.reopen();
  await waitFor(() => relay.pids()[0] !== undefined && relay.pids()[0] !== pid, { timeout: 30_000, what: 'a new source run' });
  t.notOk(alive(pid!), 'the old source run is gone');
  await pusher.kill();
  pusher = await pushInto(t, src, running);
  t.ok(running(), 'the reopened source delivers');
});

t.test('a stream switch is refused when the parameters differ and done when they match', async (t) => {
  const dir = tempDir(t);
  const [src1, src2, src3] = [await freePort(), await freePort(), await freePort()];
  const relay = await relayOn(t, src1);
  await pushInto(t, src1, () => relay.status().input.state === 'running');
  const out = capture(t, portOf(relay));
  await waitFor(() => relay.status().output.packet > 50, { timeout: 30_000, what: 'output' });

  const url2 = `tcp://127.0.0.1:${src2}?listen=1`;
  const refused = relay.switchStream(url2);
  await pushInto(t, src2, () => relay.status().swap.status !== 'probing', { size: '160x120' });
  t.same(await refused, { ok: false, reason: 'video size 160x120 != 320x240' });
  t.match(relay.status(), { url: `tcp://127.0.0.1:${src1}?listen=1`, swap: { status: 'failed', lasterror: 'video size 160x120 != 320x240' } });
  t.equal(relay.pids().length, 1, 'the probe is gone, the old source kept');

  const url3 = `tcp://127.0.0.1:${src3}?listen=1`;
  const accepted = relay.switchStream(url3);
  await pushInto(t, src3, () => relay.status().swap.status !== 'probing');
  t.same(await accepted, { ok: true });
  t.match(relay.status(), { url: url3, looping: false, swap: { url: url3, status: 'switched', lasturl: `tcp://127.0.0.1:${src1}?listen=1`, lasterror: '' } });
  const at = relay.status().output.packet;
  await waitFor(() => relay.status().output.packet > at + 50, { timeout: 30_000, what: 'output from the new source' });
  t.equal(relay.status().looping, false, 'no error frame on a switch');
  out.close();
  writeFileSync(join(dir, 'out.ts'), out.bytes());
  const v = dtsSteps(probePackets(join(dir, 'out.ts')), 'video');
  t.ok(v.minStep > 0 && v.maxGap < 0.1, `continuous across the switch (steps ${v.minStep}..${v.maxGap})`);
});

t.test('without any source the consumer gets the default slate', async (t) => {
  const dir = tempDir(t);
  const relay = await relayOn(t, await freePort());
  const out = capture(t, portOf(relay));
  await waitFor(() => relay.status().dup > 25, { timeout: 30_000, what: 'slate frames' });
  t.equal(relay.status().looping, true);
  out.close();
  writeFileSync(join(dir, 'slate.ts'), out.bytes());
  t.equal(videoSize(join(dir, 'slate.ts')), '640x360');
  const pids: number[] = await waitFor(() => (relay.pids().length > 0 ? relay.pids() : undefined), { what: 'the waiting source run' });
  await relay.stop();
  t.ok(pids.every((p) => !alive(p)), 'stop ends the waiting source');
});

t.test('RelayError carries a stable code', async (t) => {
  t.equal(new RelayError('bad_image', 'x').code, 'bad_image');
});
