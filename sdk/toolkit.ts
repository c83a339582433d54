/**
 * The SDK toolkit (`@media-core/sdk/toolkit`): helpers for jobs several plugins share, built on
 * the contract but not part of it: serving a filesystem over HTTP (paths, ranges, MIME types,
 * CORS, uploads, the memfs fast path, a mount's view in the serving threads), glob matching, atomic file writes, client addresses,
 * short ids, periodic jobs that sleep while idle (`IdleTick`), the fields of an ingest peer (`IngestPeerBase`), MPEG-TS packet fields (`sdk/mpegts.ts`), H.264 and AAC configuration records
 * (`sdk/h264.ts`, `sdk/aac.ts`), passing requests on (`HttpForwarder`) with a signed client address (`signClient`).
 * They may grow between minor versions; the contract is what `SDK_VERSION` promises.
 */
export * from './fs-path.ts';
export * from './fd-path.ts';
export * from './fs-mime.ts';
export * from './fs-cors.ts';
export * from './fs-send.ts';
export * from './fs-http.ts';
export * from './fs-api.ts';
export * from './fs-glob.ts';
export * from './fs-view.ts';
export * from './automaton.ts';
export * from './linear-regex.ts';
export * from './name-glob.ts';
export * from './atomic-write.ts';
export * from './client-address.ts';
export * from './ip.ts';
export * from './stream-name.ts';
export * from './run-paths.ts';
export * from './text.ts';
export * from './client-signature.ts';
export * from './forward.ts';
export * from './linger-close.ts';
export * from './basic-credentials.ts';
export * from './bearer-tokens.ts';
export * from './short-id.ts';
export * from './mask.ts';
export * from './module-url.ts';
export * from './ingest-peer.ts';
export * from './mpegts.ts';
export * from './ts-demux.ts';
export * from './ts-to-flv.ts';
export * from './h264.ts';
export * from './aac.ts';
export * from './encoders.ts';
export * from './idle-tick.ts';
