import { Sessions, type Answer } from './sessions.ts';
import type { FromHost, ToHost } from './protocol.ts';

/*
 * The WebRTC host process: libdatachannel (native code, through node-datachannel) runs here,
 * apart from the service, so that a fault in it ends this process and its WebRTC sessions, never
 * the service. The service (host.ts) starts it through the children service (confined like every
 * child), sends it offers, tells it which feeds exist and where publishers' RTP goes, and starts it
 * again after a fault. Its messages are checked by the service, not trusted.
 */

/** How often the traffic of live sessions goes to the service (its sessions poll once a second). */
const TRAFFIC_MS = 1000;

const send = (m: FromHost) => { if (process.connected) process.send!(m); };
let sessions: Sessions | undefined;

async function start(opts: Extract<ToHost, { t: 'start' }>['opts']): Promise<void> {
  let ndc: typeof import('node-datachannel');
  try {
    ndc = await import('node-datachannel');
  } catch (err) {
    const m: FromHost = { t: 'failed', message: `node-datachannel cannot be loaded: ${(err as Error).message.split('\n')[0]}` };
    if (process.connected) process.send!(m, () => process.exit(1));
    return;
  }
  ndc.initLogger('Warning', (level, message) => send({ t: 'log', level: level === 'Warning' ? 'warn' : 'error', msg: `libdatachannel: ${message}` }));
  sessions = new Sessions(ndc, opts, send);
  setInterval(() => {
    if (sessions && sessions.size > 0) send({ t: 'traffic', rows: sessions.traffic() });
  }, TRAFFIC_MS).unref();
  send({ t: 'ready', version: ndc.getLibraryVersion() });
}

/** Whatever else libdatachannel throws at an offer: the caller gets 400, the host goes on. */
const unusable = (err: Error): Answer => ({ refusal: { status: 400, message: `the offer cannot be used: ${err.message}` } });

function answer(seq: number, a: Answer): void {
  if ('refusal' in a) send({ t: 'refused', seq, refusal: a.refusal });
  else send({ t: 'answered', seq, ...a });
}

async function handle(m: ToHost): Promise<void> {
  if (m.t === 'start') return start(m.opts);
  const s = sessions;
  if (!s) return;
  if (m.t === 'feed') send({ t: 'fed', seq: m.seq, ...(await s.feed(m.name, m.videoSsrc, m.audioSsrc)) });
  else if (m.t === 'unfeed') s.unfeed(m.name);
  else if (m.t === 'play') answer(m.seq, await s.play(m.id, m.feed, m.offer).catch(unusable));
  else if (m.t === 'publish') answer(m.seq, await s.publish(m.id, m.offer).catch(unusable));
  else if (m.t === 'sink') s.sink(m.id, m.video, m.audio);
  else if (m.t === 'close') s.close(m.id, 'ended by the service');
}

process.on('message', (m: ToHost) => {
  handle(m).catch((err: Error) => send({ t: 'log', level: 'error', msg: 'the WebRTC host failed on a message', fields: { t: m.t, err: err.message } }));
});

function stop(): void {
  sessions?.closeAll();
  process.exit(0);
}
// the service went away (or closed the channel to stop it): end every session and go
process.on('disconnect', stop);
process.on('SIGTERM', stop);
