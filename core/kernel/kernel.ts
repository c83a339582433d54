import type { Logger } from 'pino';
import type { ConfigData, HttpScope, ServerInfo } from '../../sdk/index.ts';
import type { ConfigStore } from '../config/store.ts';
import type { LogRing } from '../log/ring.ts';
import type { DbStore } from '../store/db.ts';
import type { ServiceContainer } from './container.ts';
import type { HookRegistry } from './hook-registry.ts';

/** What core modules (not plugins) get: the whole kernel. */
export interface Kernel {
  readonly config: ConfigData;
  readonly configStore: ConfigStore;
  readonly log: Logger;
  readonly ring: LogRing;
  readonly http: HttpScope;
  readonly hooks: HookRegistry;
  readonly services: ServiceContainer;
  readonly db: DbStore;
  readonly server: ServerInfo & { setPort(port: number): void };
  /** State kept across reloads of one service. */
  readonly retained: Map<string, unknown>;
  /** Names of the loaded plugins, in mount order. */
  readonly plugins: string[];
  readonly env: NodeJS.ProcessEnv;
  onClose(fn: () => void | Promise<void>): void;
  /** Runs before every `onClose` callback, e.g. to stop child processes while plugins still serve. */
  onShutdown(fn: () => void | Promise<void>): void;
  /** Asks the owning service to rebuild the app from the stored config. */
  requestReload(): void;
}

/** A piece of the core mounted by the kernel (front door routes, process engine, ...). */
export type CoreModule = (k: Kernel) => void | Promise<void>;
