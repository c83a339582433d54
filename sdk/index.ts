/**
 * The SDK: the only module plugins import. It re-exports the typed building blocks
 * (plugin definition, service and hook refs, errors, config schemas, well-known services).
 */
export { Type, type Static, type TSchema } from '@sinclair/typebox';
export * from './refs.ts';
export * from './hooks.ts';
export * from './errors.ts';
export * from './http.ts';
export * from './plugin.ts';
export * from './fs.ts';
export * from './placeholders.ts';
export * from './auth.ts';
export * from './server.ts';
export * from './atomic-write.ts';
export * from './config/index.ts';
export * from './kernel.ts';
