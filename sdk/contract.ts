/**
 * The SDK contract (`@media-core/sdk`): what a plugin is and what it may talk to. Plugin
 * definition and context, service and hook refs, errors, the kernel's configuration sections, and the
 * well-known services (filesystems, placeholders, processes, ingest, streams, TLS,
 * ...). Its version is `SDK_VERSION`; a breaking change here bumps the major. Helpers for common
 * jobs (file serving, paths, atomic writes) are the toolkit (`@media-core/sdk/toolkit`); the
 * in-process test app is its own package, `@media-core/testkit` (it needs the core, which the SDK
 * never imports). Every file of sdk/ is in exactly one of the two entries (test/sdk/package.test.ts).
 */
export { Type, type Static, type TSchema } from '@sinclair/typebox';
export * from './version.ts';
export * from './refs.ts';
export * from './hooks.ts';
export * from './errors.ts';
export * from './http.ts';
export * from './plugin.ts';
export * from './state.ts';
export * from './server.ts';
export * from './config/index.ts';
export * from './config/checks.ts';
export * from './config/formats.ts';
export * from './config/describe.ts';
export * from './fs.ts';
export * from './fs-hooks.ts';
export * from './placeholders.ts';
export * from './run-credentials.ts';
export * from './credentials.ts';
export * from './process.ts';
export * from './process-views.ts';
export * from './process-replica.ts';
export * from './children.ts';
export * from './ingest.ts';
export * from './streams.ts';
export * from './tls.ts';
export * from './file-door.ts';
export * from './about.ts';
export * from './events.ts';
