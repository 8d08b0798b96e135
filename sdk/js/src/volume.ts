/** Persistent volumes: storage that outlives sandboxes (mounted at `/workspace` by default). */

import { ClientOptions, Transport, quoteId } from "./http.js";
import type { VolumeInfo } from "./types.js";

export interface VolumeOptions extends ClientOptions {
  /** Project id, slug or name (default: the key's project). */
  project?: string;
}

/**
 * `await Volume.create("data", { sizeMB: 1024 })`, then
 * `Sandbox.create("base", { volumes: [{ volume: "data", mountPath: "/workspace" }] })`.
 * A volume is attached to at most one running sandbox at a time.
 */
export class Volume {
  private constructor() {}

  /** A new, empty volume of `sizeMB` megabytes (1 .. 1048576). */
  static async create(name: string, opts: VolumeOptions & { sizeMB: number }): Promise<VolumeInfo> {
    return createVolume(new Transport(opts), name, opts.sizeMB, opts.project);
  }

  static async list(opts: VolumeOptions = {}): Promise<VolumeInfo[]> {
    return listVolumes(new Transport(opts), opts.project);
  }

  /** By id or name; NotFoundError if there is none. */
  static async get(idOrName: string, opts: VolumeOptions = {}): Promise<VolumeInfo> {
    return getVolume(new Transport(opts), idOrName, opts.project);
  }

  /** Delete a volume and its data (ConflictError while a sandbox has it attached). */
  static async delete(idOrName: string, opts: VolumeOptions = {}): Promise<void> {
    return deleteVolume(new Transport(opts), idOrName, opts.project);
  }
}

export async function createVolume(
  t: Transport,
  name: string,
  sizeMB: number,
  project?: string,
): Promise<VolumeInfo> {
  return t.json<VolumeInfo>("POST", "/v1/volumes", { json: { name, sizeMB, project } });
}

export async function listVolumes(t: Transport, project?: string): Promise<VolumeInfo[]> {
  const doc = await t.json<{ volumes?: VolumeInfo[] }>("GET", "/v1/volumes", { query: { project } });
  return doc.volumes ?? [];
}

export async function getVolume(t: Transport, ref: string, project?: string): Promise<VolumeInfo> {
  return t.json<VolumeInfo>("GET", `/v1/volumes/${quoteId(ref)}`, { query: { project } });
}

export async function deleteVolume(t: Transport, ref: string, project?: string): Promise<void> {
  await t.json("DELETE", `/v1/volumes/${quoteId(ref)}`, { query: { project } });
}
