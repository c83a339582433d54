import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Type, acceptRawBodies, ignoreContentType, type HttpScope, type RunUse } from '../../sdk/index.ts';
import type { PlayoutControl } from './control.ts';
import { playoutErrors } from './errors.ts';
import { KeyframeParams, PlayoutParams, PlayoutStatusSchema } from './schema.ts';

/** Largest error frame image accepted (a still image; ffmpeg decodes it). */
const IMAGE_LIMIT = 16 * 1024 * 1024;
/** Largest body of `PUT .../stream` (one URL). */
const URL_LIMIT = 64 * 1024;
const BASE = '/api/v3/process/:id/playout/:inputid';
const TAGS = ['v16.7.2'];

/**
 * The playout routes (reference 4.5) over the control service. Bodies are taken raw whatever
 * their Content-Type (the reference reads them as they come) and read here with a size limit.
 */
/**
 * `mayOf`: while an access plugin decides, whether the caller of a request may have a process do a
 * use (`httpHooksRef.processUse`), asked for a switch to a local file; undefined when none decides.
 * `callerOf`: the caller as a maker (the relay of a switch reaches of the disk only what it reaches too).
 */
export function playoutRoutes(
  http: HttpScope, control: PlayoutControl, mayOf: (req: FastifyRequest) => ((use: RunUse) => boolean) | undefined = () => undefined,
  callerOf: (req: FastifyRequest) => { maker: string; since: number } | undefined = () => undefined,
): void {
  void http.register(async (s: HttpScope) => {
    acceptRawBodies(s);
    s.get(`${BASE}/status`, {
      schema: { summary: 'Get the current playout status', tags: TAGS, params: PlayoutParams, response: { 200: PlayoutStatusSchema } },
    }, async (req) => control.status(req.params.id, req.params.inputid));

    s.get(`${BASE}/reopen`, {
      schema: { summary: 'Close the current input stream; it reopens by itself', tags: TAGS, params: PlayoutParams },
    }, async (req, reply) => {
      control.reopen(req.params.id, req.params.inputid);
      return reply.type('text/plain; charset=utf-8').send('OK');
    });

    s.get(`${BASE}/keyframe/:name`, {
      schema: { summary: 'Get the last keyframe as JPEG or PNG (by the name\'s extension)', tags: TAGS, params: KeyframeParams },
    }, async (req, reply) => {
      const png = req.params.name.toLowerCase().endsWith('.png');
      const image = await control.keyframe(req.params.id, req.params.inputid, png ? 'png' : 'jpg');
      return reply.type(png ? 'image/png' : 'image/jpeg').send(image);
    });

    s.get(`${BASE}/errorframe/encode`, {
      schema: { summary: 'Encode the error frame again now', tags: TAGS, params: PlayoutParams },
    }, async (req, reply) => {
      await control.encodeErrorframe(req.params.id, req.params.inputid);
      return reply.code(204).send();
    });

    const upload = {
      onRequest: ignoreContentType,
      schema: { summary: 'Upload an error frame (raw image bytes), encoded at once', tags: TAGS, params: KeyframeParams, body: Type.Any() },
    };
    for (const method of ['PUT', 'POST'] as const) {
      s.route({ method, url: `${BASE}/errorframe/:name`, ...upload, handler: async (req, reply) => {
        control.check(req.params.id, req.params.inputid);
        const image = await readBody(req.body, IMAGE_LIMIT);
        await control.setErrorframe(req.params.id, req.params.inputid, image);
        return reply.code(204).send();
      } });
    }

    s.put(`${BASE}/stream`, {
      onRequest: ignoreContentType,
      schema: { summary: 'Switch to another stream (text/plain URL) if its parameters match', tags: TAGS, params: PlayoutParams, body: Type.Any() },
    }, async (req, reply) => {
      control.check(req.params.id, req.params.inputid);
      const url = (await readBody(req.body, URL_LIMIT)).toString('utf8');
      await control.switchStream(req.params.id, req.params.inputid, url, mayOf(req), callerOf(req));
      return reply.code(204).send();
    });
  });
}

/**
 * The raw request body (a stream from the `*` parser), at most `limit` bytes. A larger body is read
 * to its end and dropped, so the client gets the 400 instead of a reset connection.
 */
async function readBody(body: unknown, limit: number): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  const stream = body as Readable;
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    stream.once('end', resolve);
    stream.once('error', (err) => reject(playoutErrors.body(err.message)));
    stream.once('aborted', () => reject(playoutErrors.body('the client aborted the request')));
  });
  if (size > limit) throw playoutErrors.body(`the body is larger than ${limit} bytes`);
  return Buffer.concat(chunks);
}
