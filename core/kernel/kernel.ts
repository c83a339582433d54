import type { Logger } from 'pino';
import type { ConfigErrors, EventTypeSpec, HttpScope, ServerInfo } from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';
import type { ConfigStore } from '../config/store.ts';
import type { LogRing } from '../log/ring.ts';
import type { ServiceContainer } from './container.ts';
import type { HookRegistry } from './hook-registry.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { StateService } from './state.ts';
import type { KeptResources } from './keep.ts';

/**
 * The kernel's own parts, for the core's routes (front door, config) and the mounting of
 * plugins. Plugins, the process engine included, never see it: they get a PluginContext.
 */
export interface Kernel {
  readonly config: ConfigData;
  readonly configStore: ConfigStore;
  readonly log: Logger;
  readonly ring: LogRing;
  readonly http: HttpScope;
  readonly hooks: HookRegistry;
  readonly services: ServiceContainer;
  readonly lifecycle: Lifecycle;
  readonly state: StateService;
  readonly server: ServerInfo & { setPort(port: number): void };
  /** State kept across reloads of one service. */
  readonly retained: Map<string, unknown>;
  /** Resources kept across reloads while their settings are unchanged (`ctx.keep`). */
  readonly kept: KeptResources;
  /**
   * The event catalogue of this build and the loaded plugins (`core/kernel/event-types.ts`),
   * declared to the events bus when a plugin provides `eventsRef`.
   */
  readonly eventTypes: readonly EventTypeSpec[];
  /** Names of the loaded plugins, in mount order. */
  readonly plugins: string[];
  readonly env: NodeJS.ProcessEnv;
  /** Asks the owning service to rebuild the app from the stored config. */
  requestReload(): void;
  /**
   * What a reload of the stored config would refuse (values, listeners, TLS files): undefined when
   * it would go ahead. A refusal puts the config the app runs back into the file.
   */
  checkReload(): Promise<ConfigErrors | undefined>;
}
