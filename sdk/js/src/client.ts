/** `Lizard`: a client bound to one key, server and (optionally) project. */

import { ClientOptions, Transport, quoteId } from "./http.js";
import {
  Sandbox,
  SandboxOptions,
  RestoreOptions,
  WaitForSnapshotOptions,
  connectSandbox,
  createSandbox,
  deleteSnapshot,
  getSnapshot,
  listSandboxes,
  listSnapshots,
  restoreSnapshot,
  waitForSnapshot,
} from "./sandbox.js";
import type { ApiKey, Project, SandboxInfo, Snapshot, Template, UsageReport, VolumeInfo } from "./types.js";
import { createVolume, deleteVolume, getVolume, listVolumes } from "./volume.js";

export interface LizardOptions extends ClientOptions {
  /** Project id, slug or name used by `create`, `list`, volumes (default: the key's project). */
  project?: string;
}

/**
 * `new Lizard({ project }).create("base", { timeoutMs: 120_000 })`.
 * Also holds volumes, snapshots and the admin calls (projects, keys).
 */
export class Lizard {
  readonly project?: string;
  readonly #t: Transport;

  constructor(opts: LizardOptions = {}) {
    this.project = opts.project;
    this.#t = new Transport(opts);
  }

  get apiUrl(): string {
    return this.#t.apiUrl;
  }

  /** Like `Sandbox.create`, in this client's project. */
  async create(template = "base", opts: SandboxOptions = {}): Promise<Sandbox> {
    const o = { ...opts };
    if (o.project === undefined && o.projectId === undefined) o.project = this.project;
    return createSandbox(this.#t, template, o);
  }

  async connect(sandboxId: string): Promise<Sandbox> {
    return connectSandbox(this.#t, sandboxId);
  }

  async list(opts: { status?: string } = {}): Promise<SandboxInfo[]> {
    return listSandboxes(this.#t, this.project, opts.status);
  }

  async templates(): Promise<Template[]> {
    const doc = await this.#t.json<{ templates?: Template[] }>("GET", "/v1/templates");
    return doc.templates ?? [];
  }

  // ---- snapshots ----

  async restore(snapshotId: string, opts: Omit<RestoreOptions, keyof ClientOptions> = {}): Promise<Sandbox> {
    return restoreSnapshot(this.#t, snapshotId, opts);
  }

  async waitForSnapshot(
    snapshotId: string,
    opts: Omit<WaitForSnapshotOptions, keyof ClientOptions> = {},
  ): Promise<Snapshot> {
    return waitForSnapshot(this.#t, snapshotId, opts);
  }

  async getSnapshot(snapshotId: string): Promise<Snapshot> {
    return getSnapshot(this.#t, snapshotId);
  }

  async listSnapshots(): Promise<Snapshot[]> {
    return listSnapshots(this.#t, this.project);
  }

  async deleteSnapshot(snapshotId: string): Promise<boolean> {
    return deleteSnapshot(this.#t, snapshotId);
  }

  // ---- volumes (in this client's project) ----

  /** A persistent volume of `sizeMB`; attach it with `create(..., {volumes: [{volume: name}]})`. */
  async createVolume(name: string, opts: { sizeMB: number }): Promise<VolumeInfo> {
    return createVolume(this.#t, name, opts.sizeMB, this.project);
  }

  async listVolumes(): Promise<VolumeInfo[]> {
    return listVolumes(this.#t, this.project);
  }

  /** `idOrName`: the volume's id (`vol_…`) or name. */
  async getVolume(idOrName: string): Promise<VolumeInfo> {
    return getVolume(this.#t, idOrName, this.project);
  }

  /** Delete a volume and its data (ConflictError while it is attached). */
  async deleteVolume(idOrName: string): Promise<void> {
    return deleteVolume(this.#t, idOrName, this.project);
  }

  /**
   * Metering: compute seconds, volume GB-months and cost per project over
   * [from, to) (default: this calendar month so far). A project key sees its
   * own project; the admin key every project, or `project`.
   */
  async usage(opts: { project?: string; from?: Date | string; to?: Date | string } = {}): Promise<UsageReport> {
    const iso = (t?: Date | string) => (t instanceof Date ? t.toISOString() : t);
    return this.#t.json<UsageReport>("GET", "/v1/usage", {
      query: { project: opts.project ?? this.project, from: iso(opts.from), to: iso(opts.to) },
    });
  }

  // ---- admin ----

  async createProject(name: string, opts: { slug?: string } = {}): Promise<Project> {
    return this.#t.json<Project>("POST", "/v1/projects", { json: { name, slug: opts.slug } });
  }

  async listProjects(): Promise<Project[]> {
    const doc = await this.#t.json<{ projects?: Project[] }>("GET", "/v1/projects");
    return doc.projects ?? [];
  }

  /** A new API key; its secret (`.key`) is shown only in this answer. */
  async createKey(name: string, opts: { project?: string; admin?: boolean } = {}): Promise<ApiKey> {
    return this.#t.json<ApiKey>("POST", "/v1/keys", {
      json: { name, project: opts.project, admin: opts.admin || undefined },
    });
  }

  async listKeys(): Promise<ApiKey[]> {
    const doc = await this.#t.json<{ keys?: ApiKey[] }>("GET", "/v1/keys");
    return doc.keys ?? [];
  }

  async deleteKey(keyId: string): Promise<void> {
    await this.#t.json("DELETE", `/v1/keys/${quoteId(keyId)}`);
  }
}
