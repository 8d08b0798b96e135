"""Run a fixed Python task as the unprivileged `user` and validate its JSON
output before trusting it (the Python twin of run-task.mjs).

    export LIZARD_API_KEY=... LIZARD_PROJECT_ID=proj_123
    python3 run_task.py

Set LIZARD_REQUIRE_MICROVM=1 to refuse sandboxes that are not KVM guests.
"""
import json
import os
import sys

from lizard import Lizard

project = os.environ.get("LIZARD_PROJECT_ID")
if not project or not os.environ.get("LIZARD_API_KEY"):
    raise SystemExit("Set LIZARD_PROJECT_ID and LIZARD_API_KEY")

lizard = Lizard(project)
sandbox = lizard.create("base", size="small", timeout_ms=120_000)

try:
    # Lizard isolates a sandbox either as a `microvm` (a KVM guest) or as a
    # `container` (namespaces + cgroups + seccomp, e.g. on hosts without KVM).
    info = sandbox.get_info()
    if info.runtime != "microvm":
        if os.environ.get("LIZARD_REQUIRE_MICROVM"):
            raise RuntimeError("This task requires the microvm runtime (got %s)" % info.runtime)
        print("warning: runtime is %s, not microvm" % info.runtime, file=sys.stderr)

    script = "\n".join([
        "import json",
        "values = [12, 8, 5]",
        "print(json.dumps({'total': sum(values)}))",
    ])

    sandbox.fs.write("/tmp/task.py", script)
    # An argv list runs the program directly, without a shell. timeout_ms
    # bounds this command; the sandbox's own lifetime (120 s) is separate.
    result = sandbox.process.exec_(["python3", "/tmp/task.py"], user="user", timeout_ms=30_000)

    if result.exit_code != 0 or result.truncated:
        raise RuntimeError("Task failed or returned incomplete output")
    if len(result.stdout.encode("utf-8")) > 4096:
        raise RuntimeError("Task output exceeds the application limit")

    output = json.loads(result.stdout)
    if not isinstance(output, dict) or len(output) != 1 or output.get("total") != 25:
        raise RuntimeError("Unexpected task output")

    print(output)
finally:
    sandbox.kill()
