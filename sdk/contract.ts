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
// the kernel's own helper types of these files (DepsMap, HookSet, ...) are the core's: not listed
export { createServiceRef, optional, type AnyServiceRef, type ServiceRef } from './refs.ts';
export {
  SyncHook, SyncBailHook, SyncWaterfallHook, AsyncSeriesHook, AsyncSeriesBailHook, AsyncSeriesWaterfallHook, AsyncParallelHook,
  createHooksRef, type PluginHooks,
} from './hooks.ts';
export { ApiError, BootError, httpErrors, isApiError, isBootError } from './errors.ts';
export {
  httpHooksRef, NETWORK, OPTIONAL_AUTH, PUBLIC, type AuthorizeInput, type ForwardInput, type HttpScope, type PeerVouch, type RequestAuth,
} from './http.ts';
export * from './plugin.ts';
export type { PluginState, StateDocument } from './state.ts';
export { serverRef, type ServerInfo } from './server.ts';
export * from './config/index.ts';
export { ConfigErrorList, isFile, validCidr, type ConfigErrors } from './config/checks.ts';
export { Formatted, MAX_TIMER_SECONDS } from './config/formats.ts';
export { describe, section } from './config/describe.ts';
export * from './fs.ts';
export * from './fs-hooks.ts';
export * from './placeholders.ts';
export {
  perRun, runCredentialsRef, runUserinfo, type PlaceholderRun, type RunCredential, type RunCredentials, type RunField, type RunGrant,
  type RunUse,
} from './run-credentials.ts';
export * from './credentials.ts';
export {
  type ProcessExecState, type ProcessOrder, type ProcessInfo, type ProcessProgressInfo, type ProcessStateCounts,
  type ProcessStreamProgress, type ProcessMetricsInfo, type ProcessesService, processesRef, type ProcessPreStart,
  type ProcessStateCause, type ProcessChangeEvent, type ProcessPreSave,
  type ProcessCommandView, processHooksRef, stateExtrasRef
} from './process.ts';
export { type ProcessClock, processClockRef } from './process-clock.ts';
export * from './process-views.ts';
export * from './process-replica.ts';
export * from './children.ts';
export {
  type IngestPeer, type IngestTraffic, type IngestRefusal, refusalCode, ingestHooksRef, askIngest, tellIngest
} from './ingest.ts';
export {
  type StreamFormat, type FlvPacket, type StreamPacket, type StreamStopReason, type StreamSink,
  type StreamRefusalCode, type StreamRefusal, type StreamResult, type StreamPublisher, type StreamReader,
  type StreamAdmission, type InternalAccess, type PublishOptions, type ReadOptions, type StreamAudience,
  type PublishLimits, type StreamInfo, type StreamTable, type StreamDemandSource, TsCutter, streamName,
  streamTableRef
} from './streams.ts';
export * from './tls.ts';
export * from './file-door.ts';
export * from './about.ts';
export * from './events.ts';
