import t from 'tap';
import { createServer, connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { MAX_BACKLOG, PipeDrops, readFrames, writeFrame } from '../../../plugins/srt/host/media-pipe.ts';
import { DELIVER } from '../../../plugins/srt/host/protocol.ts';

/*
 * The SRT host's media pipe: frames cross intact; when the other side stops reading, frames past
 * the backlog bound are dropped, counted, and told once per run of drops (not once per frame).
 */

async function pair(t: { teardown(fn: () => void): void }): Promise<{ a: Socket; b: Socket }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const accepted = once(server, 'connection');
  const a = connect(port, '127.0.0.1');
  const [b] = (await accepted) as [Socket];
  t.teardown(() => { a.destroy(); b.destroy(); server.close(); });
  return { a, b };
}

t.test('frames cross; a stuck reader makes frames drop, counted and logged once per run', async (t) => {
  const { a, b } = await pair(t);
  const got: Array<{ kind: number; socks: readonly number[]; bytes: number }> = [];
  readFrames(b, (kind, socks, data) => got.push({ kind, socks: [...socks], bytes: data.length }), () => t.fail('broken'));
  t.ok(writeFrame(a, DELIVER, [3, 7], Buffer.alloc(1000, 1)), 'written');
  const deadline = Date.now() + 10_000;
  while (got.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.same(got, [{ kind: DELIVER, socks: [3, 7], bytes: 1000 }], 'one frame, its sockets and bytes');

  b.pause();
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const drops = new PipeDrops('test', (fields, msg) => lines.push({ fields, msg }));
  const chunk = Buffer.alloc(1024 * 1024, 2);
  let written = 0;
  for (let i = 0; i < 64; i++) {
    const ok = writeFrame(a, DELIVER, [1], chunk);
    drops.note(ok, chunk.length);
    if (ok) written++;
  }
  // what the kernel's socket buffers hold comes on top of the bound
  t.ok(written * chunk.length <= MAX_BACKLOG + 8 * chunk.length, `the pipe took ${written} MiB: its bound plus the socket buffers`);
  t.ok(drops.frames > 0 && drops.bytes === drops.frames * chunk.length, `${drops.frames} frames dropped and counted`);
  t.equal(lines.length, 1, 'one warning for the whole run of drops');
  t.match(lines[0]!.msg, /stuck/);
  b.resume();
  while (a.writableLength > 0 && Date.now() < deadline + 20_000) await new Promise((r) => setTimeout(r, 20));
  drops.note(writeFrame(a, DELIVER, [1], chunk), chunk.length);
  t.equal(lines.length, 2, 'a second line when frames pass again');
  t.match(lines[1]!, { msg: /flows again/, fields: { total_frames: drops.frames } });
});
