import type { KV } from 'nats';
import type { IamRecord, IamReplicaService, IamWrite } from '../iam/api.ts';
import type { Log } from './connection.ts';
import { clusterErrors, isConflict } from './errors.ts';
import { importOnce } from './import.ts';
import { KvTable, type KvChange } from './kv-table.ts';

/**
 * IAM's users shared between the nodes in `core_users` (when the iam plugin is on): every change
 * of the IAM routes is written there before it is acknowledged (a new name with `create`, so a
 * name another node made first is a 409; a change of a user with `put`: the last writer wins),
 * and every node's watcher puts the values into its iam (users.json, the policy index). A node's
 * first start in a cluster adds its users.json once (the import marker, as for processes: names
 * the cluster has are kept); a user deleted while a node was away is dropped there when it
 * comes back. No HTTP here.
 */
export class UsersShare {
  readonly #iam: IamReplicaService;
  readonly #node: string;
  readonly #log: Log;
  #table: KvTable<IamRecord> | undefined;
  #prepared = false;
  #reconciled = false;
  /** Names this node wrote since it started: never dropped by the start-up reconciliation. */
  readonly #touched = new Set<string>();
  #queue: Promise<void> = Promise.resolve();

  constructor(iam: IamReplicaService, opts: { node: string; log: Log }) {
    this.#iam = iam;
    this.#node = opts.node;
    this.#log = opts.log;
    iam.attach({ write: (c) => this.write(c) });
  }

  /** One step of the node's tick: the import once, then a watcher kept running (not awaited). */
  async tick(kv: KV): Promise<void> {
    const table = this.#table ??= new KvTable<IamRecord>(kv, 'u', 'user');
    if (!this.#prepared) {
      const r = await importOnce(kv, { create: (u: IamRecord) => table.create(u.name, u) }, this.#node, this.#iam.records(), (u) => u.name);
      if (r.status === 'imported') this.#log.info({ added: r.added.length, kept: r.kept.length }, 'cluster: imported this node\'s IAM users');
      this.#prepared = true;
    }
    if (table.watching) return;
    table.watch((c) => this.#change(c))
      .then(() => { if (table.ready) this.#reconcile(table); })
      .catch((err) => this.#log.warn({ err }, 'cluster: watching core_users'));
  }

  /** After a reconnect (or a stalled watcher): the next tick starts the watcher afresh. */
  restart(): void { this.#table?.stop(); }

  /** iam's write: into `core_users` first. */
  async write(c: IamWrite): Promise<void> {
    const table = this.#table;
    if (!table?.ready) throw clusterErrors.unavailable('the cluster\'s users are not read yet');
    try {
      if (c.kind === 'delete') {
        this.#touched.add(c.name);
        await table.delete(c.name);
        return;
      }
      const name = c.record.name;
      this.#touched.add(name);
      if (c.created || (c.previousName !== undefined && c.previousName !== name)) await table.create(name, c.record);
      else await table.put(name, c.record);
      if (c.previousName !== undefined && c.previousName !== name) {
        this.#touched.add(c.previousName);
        await table.delete(c.previousName);
      }
    } catch (err) {
      if (isConflict(err)) throw err;
      throw clusterErrors.unavailable((err as Error)?.message ?? String(err));
    }
  }

  #change(c: KvChange<IamRecord>): void {
    this.#enqueue(`applying the ${c.type} of user ${c.id}`, () => (c.type === 'delete' ? this.#iam.drop(c.id) : this.#iam.apply(c.value)));
  }

  /** Once: users this node has that the cluster does not were deleted while it was away. */
  #reconcile(table: KvTable<IamRecord>): void {
    if (this.#reconciled) return;
    this.#reconciled = true;
    this.#enqueue('dropping users the cluster does not have', async () => {
      for (const { name } of this.#iam.records()) {
        if (table.find(name) || this.#touched.has(name)) continue;
        if (!await table.get(name) && !this.#touched.has(name)) await this.#iam.drop(name);
      }
    });
  }

  #enqueue(what: string, fn: () => Promise<void>): void {
    this.#queue = this.#queue.then(fn).catch((err) => this.#log.warn({ err }, `cluster: ${what}`));
  }

  /** Resolves once every change delivered so far reached iam. */
  settled(): Promise<void> { return this.#queue; }
}
