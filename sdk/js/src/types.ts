/** Shapes of the server's answers (docs/api.md), as plain objects. */

export type SandboxStatus = "running" | "paused" | "pausing" | "resuming" | "stopped" | string;

/** What `getInfo()` returns. */
export interface SandboxInfo {
  sandboxId: string;
  project: string;
  template: string;
  status: SandboxStatus;
  /** `container` or `microvm`. */
  runtime: string;
  size: string | null;
  cpuCount: number;
  memoryMB: number;
  diskMB?: number;
  region?: string;
  host?: string;
  createdAt: string;
  /** null: the sandbox never expires. */
  expiresAt: string | null;
  metadata: Record<string, string>;
  envKeys?: string[];
  [key: string]: unknown;
}

/** Result of a finished command. A non-zero exit code is a result, not an error. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Output beyond the cap (default 1 MiB per stream) was dropped. */
  truncated: boolean;
  /** The command hit its `timeoutMs` and its process group was killed. */
  timedOut: boolean;
}

export interface ProcessInfo {
  pid: number;
  cmd: string | string[];
  running: boolean;
  exitCode: number | null;
  startedAt: string;
  [key: string]: unknown;
}

export interface ProcessOutput {
  stdout: string;
  stderr: string;
  running: boolean;
  exitCode: number | null;
  truncated: boolean;
  [key: string]: unknown;
}

/** A stat result. */
export interface FileInfo {
  name: string;
  path: string;
  /** `file`, `dir`, `symlink`, ... */
  type: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  mtime: string | number;
  target?: string;
  [key: string]: unknown;
}

export interface WriteInfo {
  path: string;
  size: number;
}

export interface ExposedPort {
  port: number;
  /** `http(s)://HOSTNAME:PROXYPORT/?lizard_token=TOKEN`: open it in a browser. */
  url: string;
  /** `PORT-SANDBOXID.DOMAIN` */
  hostname: string;
  /** Send as `X-Lizard-Access-Token` (or `?lizard_token=`). */
  accessToken: string;
}

export interface PortInfo {
  port: number;
  url: string;
  hostname: string;
  [key: string]: unknown;
}

export interface StatusResult {
  status: SandboxStatus;
  reached: boolean;
  error: { code: string; message: string } | null;
}

export interface Snapshot {
  id: string;
  name: string;
  project?: string;
  status: "creating" | "ready" | "failed" | string;
  error?: { code?: string; message?: string } | string | null;
  /** true when memory and processes were saved (microvm); false: files only. */
  memory: boolean;
  poolSize: number;
  poolReady?: number;
  sizeBytes?: number;
  /** The source sandbox's size; restores keep it. */
  size?: string;
  cpuCount?: number;
  memoryMB?: number;
  sourceSandboxId?: string;
  createdAt?: string;
  [key: string]: unknown;
}

export interface VolumeInfo {
  id: string;
  name: string;
  project: string;
  sizeMB: number;
  createdAt: string;
  /** The sandbox it is attached to, or null. */
  attachedTo: string | null;
  [key: string]: unknown;
}

/** Seconds and cost of compute, in total or of one size. */
export interface ComputeUsage {
  seconds: number;
  cost: number;
}

/** One project's metering over the report's period (`GET /v1/usage`). */
export interface ProjectUsage {
  project: string;
  name: string;
  compute: ComputeUsage & { bySize: Record<string, ComputeUsage> };
  volumes: { gbMonths: number; cost: number };
  total: number;
}

/** `lizard.usage()`: the period [from, to) and each visible project. */
export interface UsageReport {
  from: string;
  to: string;
  projects: ProjectUsage[];
}

/** One entry of `volumes` at create: a volume name/id, or `{volume, mountPath}`. */
export type VolumeSpec = string | VolumeMount;

export interface VolumeMount {
  /** Volume id or name. */
  volume: string;
  /** Default `/workspace`. */
  mountPath?: string;
}

export interface NetworkOptions {
  internet?: boolean;
  allow?: string[];
  deny?: string[];
}

export interface Project {
  id: string;
  name: string;
  slug: string;
  createdAt: string;
  [key: string]: unknown;
}

export interface ApiKey {
  id: string;
  name: string;
  project: string;
  admin?: boolean;
  /** The secret; only in the answer of `createKey`. */
  key?: string;
  prefix?: string;
  createdAt: string;
  [key: string]: unknown;
}

export interface Template {
  name: string;
  sizeBytes: number;
  builtAt: string;
  buildSeconds: number;
  description: string;
  [key: string]: unknown;
}
