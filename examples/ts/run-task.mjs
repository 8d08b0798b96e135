// Run a fixed Python task as the unprivileged `user` and validate its JSON
// output before trusting it.
//
//   export LIZARD_API_KEY=... LIZARD_PROJECT_ID=proj_123
//   node run-task.mjs
//
// Set LIZARD_REQUIRE_MICROVM=1 to refuse sandboxes that are not KVM guests.
import { Lizard } from "@lizard-build/sdk";

const project = process.env.LIZARD_PROJECT_ID;
if (!project || !process.env.LIZARD_API_KEY) {
  throw new Error("Set LIZARD_PROJECT_ID and LIZARD_API_KEY");
}

const lizard = new Lizard({ project });
const sandbox = await lizard.create("base", {
  size: "small",
  timeoutMs: 120_000,
});

try {
  // Lizard isolates a sandbox either as a `microvm` (a KVM guest) or as a
  // `container` (namespaces + cgroups + seccomp, e.g. on hosts without KVM).
  const info = await sandbox.getInfo();
  if (info.runtime !== "microvm") {
    if (process.env.LIZARD_REQUIRE_MICROVM) {
      throw new Error(`This task requires the microvm runtime (got ${info.runtime})`);
    }
    console.warn(`warning: runtime is ${info.runtime}, not microvm`);
  }

  const script = [
    "import json",
    "values = [12, 8, 5]",
    "print(json.dumps({'total': sum(values)}))",
  ].join("\n");

  await sandbox.fs.write("/tmp/task.py", script);
  const result = await sandbox.process.exec(
    ["python3", "/tmp/task.py"],
    { user: "user", timeoutMs: 30_000 },
  );

  if (result.exitCode !== 0 || result.truncated) {
    throw new Error("Task failed or returned incomplete output");
  }
  if (Buffer.byteLength(result.stdout, "utf8") > 4096) {
    throw new Error("Task output exceeds the application limit");
  }

  const output = JSON.parse(result.stdout);
  if (
    output === null ||
    typeof output !== "object" ||
    Array.isArray(output) ||
    Object.keys(output).length !== 1 ||
    output.total !== 25
  ) {
    throw new Error("Unexpected task output");
  }

  console.log(output);
} finally {
  await sandbox.kill();
}
