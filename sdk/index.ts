/**
 * The SDK: the only module plugins import. It re-exports the typed building blocks
 * (plugin definition, service and hook refs, errors, config schemas, well-known services).
 * This file is the in-repo entry with everything; as a package the SDK is split into the
 * contract (`contract.ts`, the package's `.`) and the toolkit (`toolkit.ts`, `./toolkit`), and
 * this entry is the two together (every file of sdk/ is in exactly one of them).
 */
export * from './contract.ts';
export * from './toolkit.ts';
