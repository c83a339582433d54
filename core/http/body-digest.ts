import { createHash, timingSafeEqual } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../sdk/index.ts';

/**
 * The body a `peer` tap's signature covers (`PeerVouch.bodySha256`): the request is refused with
 * 403 when the body read differs, before the route's handler runs. A route that never reads its
 * body (GET, a DELETE without body schema) never uses it either, so it is not checked there.
 */
export class BodyDigests {
  readonly #want = new WeakMap<FastifyRequest, string>();

  expect(request: FastifyRequest, sha256hex: string): void {
    this.#want.set(request, sha256hex.toLowerCase());
  }

  /** The root `preParsing` hook: the payload, hashed on its way to the body parser. */
  install(app: FastifyInstance): void {
    app.addHook('preParsing', async (request, _reply, payload) => {
      const want = this.#want.get(request);
      if (want === undefined) return payload;
      const check = new DigestCheck(want);
      // a client that goes away mid-body ends the check too
      payload.once('error', (err) => check.destroy(err));
      return payload.pipe(check);
    });
  }
}

export const bodyMismatch = () => new ApiError(403, 'Forbidden', ['the request body is not the one its signed peer header covers'], 'PEER_BODY_MISMATCH');

class DigestCheck extends Transform {
  readonly #want: Buffer;
  readonly #hash = createHash('sha256');

  constructor(want: string) {
    super();
    this.#want = Buffer.from(want, 'hex');
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.#hash.update(chunk);
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    const got = this.#hash.digest();
    cb(got.length === this.#want.length && timingSafeEqual(got, this.#want) ? null : bodyMismatch());
  }
}
