/**
 * The SDK: the only module plugins import. It re-exports the typed building blocks
 * (plugin definition, service and hook refs, errors, config schemas, well-known services).
 * This file is the in-repo entry with everything; as a package the SDK is split into the
 * contract (`contract.ts`, the package's `.`) and the toolkit (`toolkit.ts`, `./toolkit`).
 */
export { Type, type Static, type TSchema } from '@sinclair/typebox';
export * from './refs.ts';
export * from './hooks.ts';
export * from './errors.ts';
export * from './version.ts';
export * from './http.ts';
export * from './plugin.ts';
export * from './fs.ts';
export * from './fs-path.ts';
export * from './fd-path.ts';
export * from './fs-mime.ts';
export * from './fs-cors.ts';
export * from './fs-send.ts';
export * from './fs-http.ts';
export * from './fs-hooks.ts';
export * from './fs-api.ts';
export * from './placeholders.ts';
export * from './run-credentials.ts';
export * from './auth.ts';
export * from './client-address.ts';
export * from './client-signature.ts';
export * from './forward.ts';
export * from './linger-close.ts';
export * from './basic-credentials.ts';
export * from './server.ts';
export * from './atomic-write.ts';
export * from './config/index.ts';
export * from './config/checks.ts';
export * from './config/formats.ts';
export * from './config/describe.ts';
export * from './state.ts';
export * from './process.ts';
export * from './process-views.ts';
export * from './process-replica.ts';
export * from './fs-glob.ts';
export * from './ingest.ts';
export * from './streams.ts';
export * from './tls.ts';
export * from './children.ts';
export * from './metrics.ts';
export * from './sessions.ts';
export * from './short-id.ts';
export * from './mask.ts';
export * from './module-url.ts';
export * from './mpegts.ts';
export * from './playout.ts';
export * from './about.ts';
export * from './graphql.ts';
export * from './name-glob.ts';
export * from './events.ts';
export * from './event-types.ts';
export * from './file-door.ts';
