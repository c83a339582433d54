import {
  findFilesystem, runUserinfo, type FilesystemService, type PlaceholderDefinition, type PlaceholderRegistry, type ServerInfo,
} from '../../sdk/index.ts';

const NAME = /^[a-z]+(:[0-9A-Za-z]+)?$/;

/** Where `{fs:<name>}` looks when no plugin registered it: the filesystem registry and the listener. */
export interface FsPlaceholderSource {
  filesystems(): readonly FilesystemService[];
  server: Pick<ServerInfo, 'host' | 'port'>;
}

/**
 * The placeholders plugins register (`{memfs}`, `{rtmp,name=..}`, ...), looked up by name or alias.
 * `{fs:<name>}` of a filesystem that registered no placeholder of its own (a vendor's) comes from
 * the filesystem registry, by name or alias: its local folder (`root`), else the URL of its
 * public mount on this service (`http://<host>:<port><mount>`, like the reference's S3 mounts).
 */
export class Placeholders implements PlaceholderRegistry {
  readonly #byName = new Map<string, PlaceholderDefinition>();
  readonly #fs: FsPlaceholderSource | undefined;

  constructor(fs?: FsPlaceholderSource) {
    this.#fs = fs;
  }

  register(def: PlaceholderDefinition): void {
    for (const name of [def.name, ...(def.aliases ?? [])]) {
      if (!NAME.test(name)) throw new Error(`invalid placeholder name '${name}'`);
      if (this.#byName.has(name)) throw new Error(`placeholder '{${name}}' is already registered`);
      this.#byName.set(name, def);
    }
  }

  get(name: string): PlaceholderDefinition | undefined {
    return this.#byName.get(name) ?? this.#fromFilesystem(name);
  }

  list(): PlaceholderDefinition[] {
    return [...new Set(this.#byName.values())];
  }

  #fromFilesystem(name: string): PlaceholderDefinition | undefined {
    if (!this.#fs || !name.startsWith('fs:')) return undefined;
    const fs = findFilesystem(this.#fs.filesystems(), name.slice(3));
    if (!fs) return undefined;
    const { server } = this.#fs;
    return {
      name,
      contexts: ['global', 'address', 'options'],
      // computed on every use: the port is known only once the app listens; writes behind Basic
      // credentials get the child's run credential (its own paths only)
      value: (_section, run) => {
        if (fs.root) return fs.root;
        const host = server.host().includes(':') ? `[${server.host()}]` : server.host();
        const cred = run && fs.publicMount?.writes?.basic ? runUserinfo(run) : '';
        return `http://${cred}${host}:${server.port()}${fs.mount === '/' ? '' : fs.mount}`;
      },
    };
  }
}
