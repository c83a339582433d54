import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** A plain node:http GET (fetch would decompress behind our back). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('gzip on the API above 1000 bytes for clients that accept it; ?pretty', async (t) => {
  const app = await startApp(t);
  // the config is well above 1000 bytes
  const plain = await rawGet(`${app.url}/api/v3/config`);
  t.equal(plain.status, 200);
  t.equal(plain.headers['content-encoding'], undefined, 'not asked: not compressed');
  t.equal(plain.headers.vary, 'Accept-Encoding');
  t.ok(plain.body.length >= 1000);

  const gz = await rawGet(`${app.url}/api/v3/config`, { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.ok(gz.body.length < plain.body.length, 'smaller on the wire');
  t.same(JSON.parse(gunzipSync(gz.body).toString()), JSON.parse(plain.body.toString()));

  const small = await rawGet(`${app.url}/api/v3/fs`, { 'accept-encoding': 'gzip' });
  t.ok(small.body.length < 1000);
  t.equal(small.headers['content-encoding'], undefined, 'small bodies stay plain');
  t.equal(small.headers.vary, 'Accept-Encoding');

  const about = await rawGet(`${app.url}/api`, { 'accept-encoding': 'gzip' });
  t.equal(about.headers['content-encoding'], undefined, '/api is never compressed');
  t.equal(about.headers.vary, undefined);

  // a file read through the API: streamed, compressed when its type is text
  const text = 'line of text\n'.repeat(200);
  t.equal((await app.request('PUT', '/api/v3/fs/mem/big.txt', { raw: text })).status, 201);
  const file = await rawGet(`${app.url}/api/v3/fs/mem/big.txt`, { 'accept-encoding': 'gzip' });
  t.equal(file.headers['content-encoding'], 'gzip');
  t.equal(gunzipSync(file.body).toString(), text);

  const pretty = await rawGet(`${app.url}/api/v3/fs?pretty`);
  t.match(pretty.body.toString(), /^\[\n {2}\{\n {4}"name"/, '2-space indent');
  t.same(JSON.parse(pretty.body.toString()), JSON.parse(small.body.toString()));
  const prettyGz = await rawGet(`${app.url}/api/v3/config?x=1&pretty=false`, { 'accept-encoding': 'gzip' });
  t.match(gunzipSync(prettyGz.body).toString(), /^\{\n {2}"/, 'any value, then compressed');
  t.notMatch((await rawGet(`${app.url}/api/v3/fs?prettyx=1`)).body.toString(), /\n/, 'only the pretty parameter');
});
