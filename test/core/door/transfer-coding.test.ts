import t from 'tap';
import { connect } from 'node:net';
import { startApp } from '../../helpers/app.ts';

/** One raw request on its own connection; the whole answer as text (the server ends or 3 s pass). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => { got += d.toString('latin1'); });
    s.on('error', () => {});
    const done = () => { clearTimeout(timer); s.destroy(); resolve(got); };
    const timer = setTimeout(done, 3000);
    s.on('close', done);
    s.write(text);
  });
}

t.test('an upload in a transfer coding besides chunked is 501 with the Error body; nothing stored', async (t) => {
  const app = await startApp(t, { config: { storage: { memory: { auth: { enable: false } } } } });
  const port = Number(new URL(app.url).port);
  for (const te of ['gzip, chunked', 'deflate,chunked', 'x-custom, chunked']) {
    const answer = await raw(port, `PUT /memfs/te.txt HTTP/1.1\r\nhost: x\r\ntransfer-encoding: ${te}\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
    t.match(answer, /^HTTP\/1\.1 501 /, `${te}: 501`);
    t.match(answer, /"code":501,"message":"Not Implemented"/, 'with the Error body');
  }
  t.equal((await app.request('GET', '/memfs/te.txt')).status, 404, 'nothing stored');
  const chunked = await raw(port, 'PUT /memfs/te.txt HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  t.match(chunked, /^HTTP\/1\.1 201 /, 'chunked alone is taken');
  t.equal((await app.request('GET', '/memfs/te.txt')).text, 'hello');
});
