/**
 * Lizard TypeScript SDK: create sandboxes, run commands and move files in them.
 *
 * ```ts
 * import { Sandbox } from "@lizard-build/sdk";
 * const sandbox = await Sandbox.create("base", { timeoutMs: 120_000 });
 * try {
 *   const { stdout } = await sandbox.process.exec('echo "hello from Lizard"');
 * } finally {
 *   await sandbox.kill();
 * }
 * ```
 *
 * Configuration comes from `LIZARD_API_KEY` and `LIZARD_API_URL` (default
 * `http://127.0.0.1:7400`) unless given as `apiKey` / `apiUrl`.
 */

export * from "./errors.js";
export type * from "./types.js";
export { DEFAULT_API_URL, DEFAULT_REQUEST_TIMEOUT_MS, SDK_VERSION } from "./http.js";
export type { ClientOptions } from "./http.js";
export { Sandbox, DEFAULT_TIMEOUT_MS, DEFAULT_WAIT_MS } from "./sandbox.js";
export type {
  CreateOptions,
  ListOptions,
  RestoreOptions,
  SandboxOptions,
  WaitForSnapshotOptions,
  WaitOptions,
} from "./sandbox.js";
export { Lizard } from "./client.js";
export type { LizardOptions } from "./client.js";
export { Process, ProcessHandle } from "./process.js";
export type { Command, ExecOptions, OutputCallback, Signal } from "./process.js";
export { Volume } from "./volume.js";
export type { VolumeOptions } from "./volume.js";
export { Filesystem } from "./fs.js";
export type { UserOption, WriteData, WriteOptions } from "./fs.js";
