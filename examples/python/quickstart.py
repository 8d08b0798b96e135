"""Quickstart: start an `interpreter` sandbox, run Python in it, write a file
and run it, reconnect by id, and always kill the sandbox at the end.

    export LIZARD_API_KEY=...           # lizard keys create my-laptop
    export LIZARD_PROJECT_ID=proj_123   # optional: id, slug or name
    python3 quickstart.py
"""
import os

from lizard import Sandbox

# Without a project the sandbox goes to the API key's own project.
project_id = os.environ.get("LIZARD_PROJECT_ID")

sandbox = Sandbox.create("interpreter", project_id=project_id, timeout_ms=300_000)
try:
    # A string runs through /bin/sh -c. A non-zero exit code is a result,
    # not an exception: check exit_code yourself.
    result = sandbox.process.exec_("python -c 'print(2 ** 10)'")
    print(result.stdout, result.stderr, result.exit_code)

    sandbox.fs.write("/tmp/task.py", "print(42)\n")
    result = sandbox.process.exec_("python /tmp/task.py")
    print(result.stdout)

    # Another process (or a later request) can get a handle from the id.
    connected = Sandbox.connect(sandbox.sandbox_id)
    info = connected.get_info()
    print(info.sandbox_id, info.template, info.status, info.runtime)
finally:
    sandbox.kill()
