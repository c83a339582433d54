import { PassThrough, Readable } from 'node:stream';
import {
  CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand,
  ListObjectsV2Command, PutObjectCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { FsFileInfo } from '../../sdk/index.ts';
import { deadline, isNotFound, TIMEOUTS } from './client.ts';

/** What HEAD says of an object. */
export interface ObjectHead { size: number; mtimeMs: number; etag: string; mime?: string }

/** Part size of multipart uploads and how many parts are in flight (memory per upload: their product). */
export const MULTIPART = { partSize: 8 * 1024 * 1024, queueSize: 2 };

const keyOf = (path: string) => path.replace(/^\/+/, '');

/** What a HEAD's or a GET's answer says of the object. */
function headOf(r: { LastModified?: Date; ContentLength?: number; ETag?: string; ContentType?: string }): ObjectHead {
  const mtimeMs = r.LastModified?.getTime() ?? 0;
  const size = r.ContentLength ?? 0;
  return { size, mtimeMs, etag: r.ETag ?? `"${size.toString(16)}-${mtimeMs.toString(16)}"`, mime: r.ContentType };
}

/** A GET's deadline for its headers only (an abort after them would cut a body being read): `done()` once they came. */
function headersDeadline(): { signal: AbortSignal; abort(): void; done(): void } {
  const c = new AbortController();
  const timer = setTimeout(() => c.abort(), TIMEOUTS.callMs);
  return { signal: c.signal, abort: () => c.abort(), done: () => clearTimeout(timer) };
}

/** The S3 calls of one bucket, each with its deadline. */
export class Bucket {
  readonly client: S3Client;
  readonly name: string;
  constructor(client: S3Client, name: string) {
    this.client = client;
    this.name = name;
  }

  /** HEAD; undefined when there is no such object. */
  async head(path: string): Promise<ObjectHead | undefined> {
    try {
      return headOf(await this.client.send(new HeadObjectCommand({ Bucket: this.name, Key: keyOf(path) }), { abortSignal: deadline() }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * GET of the whole object: what it is (size, ETag, as of this one answer) and its body, held
   * unread (the socket's buffers) until the reader takes or drops it. Undefined when missing.
   * One answer for both: an object rewritten after it (a playlist) cannot fail the body.
   */
  async get(path: string): Promise<{ head: ObjectHead; body: Readable } | undefined> {
    const d = headersDeadline();
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: keyOf(path) }), { abortSignal: d.signal });
      return { head: headOf(r), body: (r.Body as Readable | undefined) ?? Readable.from([]) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    } finally {
      d.done();
    }
  }

  /**
   * Bytes `start..end` of an object as a stream that starts at once: the GET runs behind it (its
   * headers within the call deadline), the body flows as the reader takes it, never held whole.
   */
  range(path: string, start: number, end: number, etag?: string): Readable {
    const out = new PassThrough();
    const d = headersDeadline();
    out.on('close', () => d.abort());
    this.client.send(new GetObjectCommand({ Bucket: this.name, Key: keyOf(path), Range: `bytes=${start}-${end}`, IfMatch: etag }), { abortSignal: d.signal })
      .then((r) => {
        d.done();
        const body = r.Body as Readable | undefined;
        // a store that ignores If-Match (some do) is held to it here: another version's bytes are no answer
        const changed = (etag !== undefined && r.ETag !== undefined && r.ETag !== etag) || (r.ContentLength !== undefined && r.ContentLength !== end - start + 1);
        if (changed) {
          body?.destroy();
          return void out.destroy(new Error(`${path} changed since it was opened`));
        }
        if (!body) return void out.end();
        body.on('error', (e) => out.destroy(e));
        body.pipe(out);
      }, (err: Error) => {
        d.done();
        out.destroy(err);
      });
    return out;
  }

  /** The whole object (for `readFile`); undefined when missing. */
  async read(path: string): Promise<Buffer | undefined> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: keyOf(path) }), { abortSignal: deadline() });
      return Buffer.from(await r.Body!.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async put(path: string, data: Buffer, mime?: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.name, Key: keyOf(path), Body: data, ContentLength: data.length, ContentType: mime }), { abortSignal: deadline() });
  }

  /** A streamed upload (multipart above one part): memory stays at `partSize * queueSize`. */
  async putStream(path: string, body: Readable, mime?: string): Promise<void> {
    const up = new Upload({
      client: this.client, partSize: MULTIPART.partSize, queueSize: MULTIPART.queueSize, leavePartsOnError: false,
      params: { Bucket: this.name, Key: keyOf(path), Body: body, ContentType: mime },
    });
    await up.done();
  }

  async remove(path: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.name, Key: keyOf(path) }), { abortSignal: deadline() });
  }

  /** Every object below `prefix` (paginated, one deadline per page). */
  async list(prefix: string): Promise<FsFileInfo[]> {
    const out: FsFileInfo[] = [];
    let token: string | undefined;
    do {
      const r = await this.client.send(new ListObjectsV2Command({ Bucket: this.name, Prefix: keyOf(prefix) || undefined, ContinuationToken: token }), { abortSignal: deadline() });
      for (const o of r.Contents ?? []) {
        if (!o.Key) continue;
        out.push({ name: '/' + o.Key, size_bytes: o.Size ?? 0, last_modified: Math.floor((o.LastModified?.getTime() ?? 0) / 1000) });
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  /** Creates the bucket when missing; true when it is there. Throws when S3 cannot say. */
  async ensure(): Promise<'exists' | 'created'> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.name }), { abortSignal: deadline() });
      return 'exists';
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await this.client.send(new CreateBucketCommand({ Bucket: this.name }), { abortSignal: deadline() });
    return 'created';
  }
}

/** The literal start of a glob (up to its first special character): the listing's prefix. */
export function globPrefix(glob: string | undefined): string {
  if (!glob) return '';
  const i = glob.search(/[*?[{\\]/);
  return i < 0 ? glob : glob.slice(0, i);
}
