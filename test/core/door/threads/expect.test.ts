import t from 'tap';
import { connect } from 'node:net';
import { basic, startFs } from '../../../plugins/memfs/fs-helpers.ts';
import { waitFor } from '../../../helpers/wait.ts';

/*
 * `Expect: 100-continue` through serving threads: an upload a thread passes to main (memfs auth
 * on) is judged by main before the client sends its body, as on the main loop: a refusal comes
 * instead of the 100; an accepted one gets main's 100 once, then its answer.
 */

const ROUNDS = 12;

/** One exchange on a fresh connection; the body goes out only after a 100 (as ffmpeg and curl do). */
function exchange(url: string, auth: string, path: string): Promise<string> {
  const u = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => {
      sock.write(`PUT ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    });
    let got = '';
    let sent = false;
    sock.on('data', (d) => {
      got += d.toString();
      if (!sent && got.startsWith('HTTP/1.1 100')) {
        sent = true;
        sock.write('hello');
      }
      if (/HTTP\/1\.1 [2-5]\d\d/.test(got)) {
        sock.destroy();
        resolve(got);
      }
    });
    sock.on('error', reject);
  });
}

t.test('Expect through threads: main decides, its 100 is relayed once', async (t) => {
  const app = await startFs(t, { http: { threads: 2 }, sessions: { enable: false } });
  const refused: string[] = [];
  const accepted: string[] = [];
  const before = await app.service.threads.stats();
  let i = 0;
  // rounds until every thread has taken (and passed on) some of them: the kernel picks the listener
  await waitFor(async () => {
    for (const end = i + ROUNDS; i < end; i++) {
      refused.push((await exchange(app.url, '', `/memfs/e${i}.ts`)).split('\r\n')[0]!);
      const ok = await exchange(app.url, `Authorization: ${basic().authorization}\r\n`, `/memfs/e${i}.ts`);
      accepted.push(`${ok.match(/HTTP\/1\.1 100 Continue/g)?.length ?? 0} ${/HTTP\/1\.1 201/.test(ok)}`);
    }
    const now = await app.service.threads.stats();
    return now.every((s, n) => s.forwarded > before[n]!.forwarded);
  }, { timeout: 30_000, what: 'every thread passing uploads on to main' });
  t.same(refused, refused.map(() => 'HTTP/1.1 401 Unauthorized'), 'the 401 comes instead of 100 Continue, on every listener');
  t.same(accepted, accepted.map(() => '1 true'), 'with credentials: one 100, then 201');
  t.equal((await app.request('GET', `/memfs/e${i - 1}.ts`)).text, 'hello');
});
