import t from 'tap';
import type { Readable } from 'node:stream';
import { MimeTable } from '../../../sdk/index.ts';
import { createClient } from '../../../plugins/s3-fs/client.ts';
import { Bucket } from '../../../plugins/s3-fs/objects.ts';
import { BufferBudget } from '../../../plugins/s3-fs/pending.ts';
import { S3Filesystem } from '../../../plugins/s3-fs/service.ts';
import type { S3FsEntry } from '../../../plugins/s3-fs/schema.ts';
import type { TestLike } from '../../helpers/app.ts';
import { s3Entry, s3Unavailable, startS3 } from '../../helpers/s3.ts';

/*
 * A read through the mount serves one version of an object: the one S3 answered when the file was
 * opened, even when the object is rewritten before its bytes are taken (ffmpeg rewrites its
 * playlist every segment). The real S3 test server; the filesystem without the HTTP around it.
 */

const skip = s3Unavailable();

async function bytesOf(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function cloud(t: TestLike): Promise<{ fs: S3Filesystem; bucket: Bucket }> {
  const s3 = await startS3(t);
  const bucket = new Bucket(createClient(s3Entry(s3) as unknown as S3FsEntry), s3.bucket);
  await bucket.ensure();
  const reports = { lost: () => {}, health: () => {} };
  const fs = new S3Filesystem({ name: 'cloud', mount: '/cloud', bucket, budget: new BufferBudget(), mime: MimeTable.builtin(), writes: {}, reports });
  t.teardown(() => bucket.client.destroy());
  return { fs, bucket };
}

t.test('an object rewritten between open and read: the reader gets the version it opened, whole', { skip }, async (t) => {
  const { fs, bucket } = await cloud(t);
  const v1 = Buffer.alloc(300_000, 'a');
  const v2 = Buffer.alloc(200_000, 'b');
  await bucket.put('/cam.m3u8', v1);
  const node = await fs.open('/cam.m3u8');
  if (node?.kind !== 'file') throw new Error('no file');
  t.equal(node.file.size, v1.length, 'the size of the version opened');
  await bucket.put('/cam.m3u8', v2);
  const got = await bytesOf(node.file.stream!(0, node.file.size - 1));
  t.ok(got.equals(v1), `the bytes of that version (${got.length})`);
  // a later open sees the new version
  const again = await fs.open('/cam.m3u8');
  if (again?.kind !== 'file') throw new Error('no file');
  t.equal(again.file.size, v2.length, 'a new open: the new version');
  t.ok((await bytesOf(again.file.stream!(0, again.file.size - 1))).equals(v2));
});

t.test('ranges, HEAD, missing objects and a released read', { skip }, async (t) => {
  const { fs, bucket } = await cloud(t);
  const data = Buffer.from('0123456789'.repeat(1000));
  await bucket.put('/seg_1.ts', data);
  const node = await fs.open('/seg_1.ts');
  if (node?.kind !== 'file') throw new Error('no file');
  t.equal((await bytesOf(node.file.stream!(10, 24))).toString(), '012345678901234', 'a range: its bytes');
  t.ok((await bytesOf(node.file.stream!(0, data.length - 1))).equals(data), 'then the whole file (a second read)');
  const head = await fs.open('/seg_1.ts', { head: true });
  if (head?.kind !== 'file') throw new Error('no file');
  t.equal(head.file.size, data.length, 'HEAD: the size');
  t.equal(head.file.stream, undefined, 'HEAD: no body');
  t.equal(await fs.open('/nothing.ts'), undefined, 'a missing object');
  // opened and released (a 304, a refusal): the next reads go on (the connection was given back)
  for (let i = 0; i < 60; i++) {
    const n = await fs.open('/seg_1.ts');
    if (n?.kind === 'file') n.file.release?.();
  }
  const last = await fs.open('/seg_1.ts');
  if (last?.kind !== 'file') throw new Error('no file');
  t.ok((await bytesOf(last.file.stream!(0, data.length - 1))).equals(data), 'read after 60 released opens');
  // an object rewritten after open: a range of the old version is refused, never mixed with the new
  await bucket.put('/seg_1.ts', Buffer.alloc(data.length, 'x'));
  await t.rejects(bytesOf(last.file.stream!(0, 9)), 'a range of a version S3 no longer has fails the read');
});

t.test('S3 gone while a body is held unread: the read fails, nothing else', { skip }, async (t) => {
  const s3 = await startS3(t);
  const bucket = new Bucket(createClient(s3Entry(s3) as unknown as S3FsEntry), s3.bucket);
  await bucket.ensure();
  t.teardown(() => bucket.client.destroy());
  const fs = new S3Filesystem({ name: 'cloud', mount: '/cloud', bucket, budget: new BufferBudget(), mime: MimeTable.builtin(), writes: {}, reports: { lost: () => {}, health: () => {} } });
  await bucket.put('/big.ts', Buffer.alloc(16 * 1024 * 1024, 'z'));
  const node = await fs.open('/big.ts');
  if (node?.kind !== 'file') throw new Error('no file');
  // the store dies with most of the body unsent: the held body's socket resets before anyone reads it
  await s3.stop();
  await new Promise((r) => setTimeout(r, 500));
  await t.rejects(bytesOf(node.file.stream!(0, node.file.size - 1)), 'the read fails');
  t.pass('the process is still here');
});
