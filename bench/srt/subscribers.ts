import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * N light SRT subscribers through the plugin's addon (caller side), in their own process so the
 * service's CPU is measured alone. Reports per subscriber: bytes received and libsrt's receive
 * loss and drop counts, on `report`; `stop` closes them.
 *
 *   node bench/srt/subscribers.ts <srt port> <stream> <count>
 */
const [port, stream, count] = process.argv.slice(2);
const ADDON = fileURLToPath(new URL('../../plugins/srt/addon/build/Release/srt_addon.node', import.meta.url));
const addon = createRequire(import.meta.url)(ADDON) as {
  SrtServer: new (o: object, f: (type: string, id: number, text: string, extra: Buffer) => void) => {
    start(): number; stop(): void; stats(id: number): Record<string, number> | null;
  };
};

const subs = Array.from({ length: Number(count) }, () => {
  const sub = { bytes: 0, closed: false, id: 0, sock: undefined as undefined | InstanceType<typeof addon.SrtServer> };
  sub.sock = new addon.SrtServer({ host: '127.0.0.1', port: Number(port), latencyMs: 120, passphrase: '', token: '', queue: 4096, streamid: `${stream},mode:request` },
    (type, _id, _text, extra) => {
      if (type === 'data') sub.bytes += extra.length;
      else if (type === 'close') sub.closed = true;
    });
  sub.id = sub.sock.start();
  return sub;
});
process.send!({ ready: subs.length });
process.on('message', (m) => {
  if (m === 'report') {
    process.send!({
      report: subs.map((s) => {
        const st = s.sock!.stats(s.id) ?? {};
        return { bytes: s.bytes, closed: s.closed, loss: st.pktRcvLossTotal ?? 0, drop: st.pktRcvDropTotal ?? 0 };
      }),
    });
  } else if (m === 'stop') {
    for (const s of subs) s.sock!.stop();
    process.exit(0);
  }
});
