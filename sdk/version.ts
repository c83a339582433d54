/**
 * The SDK's identity. A plugin declares the SDK versions it was written for as a semver range
 * (`sdkVersion` in its definition, or a `peerDependencies` entry on `@media-core/sdk` in its package);
 * the loader refuses to boot a plugin whose range this version does not satisfy. The number
 * follows the contract (refs, hooks, errors, `definePlugin`): a breaking change there bumps the
 * major. `sdk/package.json` carries the same number (a test keeps them equal).
 */

/**
 * The SDK's version (semver).
 *
 * @example
 * ctx.log.info({ sdk: SDK_VERSION }, 'mounted');
 */
export const SDK_VERSION = '4.0.0';
