import t from 'tap';
import { connect } from 'node:net';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * `db.max_metadata_mbytes` before the body is read (issue 27.3): a metadata PUT whose
 * Content-Length does not fit in the room left is refused at once, so bodies that would be
 * refused after parsing cost no memory, and parallel bodies are counted while in flight.
 */

const KiB = 1024;
const value = (n: number) => JSON.stringify('v'.repeat(n));

/** Sends only the head of a PUT (its Content-Length announces `length` bytes) and collects the answer. */
function headOnly(url: string, path: string, length: number): { answer: () => string; close: () => void } {
  const u = new URL(url);
  const sock = connect(Number(u.port), u.hostname);
  let got = '';
  sock.on('data', (d) => { got += d.toString(); });
  sock.on('error', () => {});
  sock.write(`PUT ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n"vvv`);
  return { answer: () => got, close: () => sock.destroy() };
}

t.test('a body that cannot fit is refused before it is read', async (t) => {
  const app = await startApp(t, { config: { db: { max_metadata_mbytes: 1 } } });
  const big = { raw: value(700 * KiB), headers: { 'content-type': 'application/json' } };
  t.equal((await app.request('PUT', '/api/v3/metadata/a', big)).status, 200, '700 KiB stored');
  const head = headOnly(app.url, '/api/v3/metadata/b', 500 * KiB);
  t.teardown(head.close);
  const answer = await waitFor(() => head.answer().includes('\r\n\r\n') && head.answer(), { timeout: 10_000, what: 'an answer before the body' });
  t.match(answer, /^HTTP\/1\.1 413 /, '413 without waiting for the 500 KiB body');
  t.match(answer, /METADATA_TOO_LARGE|db\.max_metadata_mbytes/, 'the metadata limit names itself');
  const replace = { raw: value(500 * KiB), headers: { 'content-type': 'application/json' } };
  t.equal((await app.request('PUT', '/api/v3/metadata/a', replace)).status, 200, 'replacing the stored key with a body larger than the room left passes (it shrinks)');
});

t.test('parallel bodies count while in flight: no more are read than fit', async (t) => {
  const app = await startApp(t, { config: { db: { max_metadata_mbytes: 1 } } });
  const heads = [0, 1, 2].map((i) => headOnly(app.url, `/api/v3/metadata/k${i}`, 400 * KiB));
  t.teardown(() => heads.forEach((h) => h.close()));
  await waitFor(() => heads.some((h) => /^HTTP\/1\.1 413 /.test(h.answer())), { timeout: 10_000, what: 'a refusal' });
  const answered = heads.filter((h) => h.answer() !== '');
  t.equal(answered.length, 1, 'two bodies of 400 KiB are being received (800 KiB of 1 MiB); the third is refused at once');
  heads.forEach((h) => h.close());
  await waitFor(async () => (await app.request('PUT', '/api/v3/metadata/after', { raw: value(900 * KiB), headers: { 'content-type': 'application/json' } })).status === 200,
    { what: 'room given back when the unfinished bodies were dropped' });
});
