"""Pause and resume a sandbox, then save it as a snapshot and start a new
sandbox from it.

    export LIZARD_API_KEY=...
    python3 pause_snapshot.py

pause()/resume() are queued and return at once: wait_for_status() says when
they are done (or raises with the reason they failed). While paused, the
sandbox's lifetime clock stops and it is not billed for compute.
"""
import time

from lizard import Sandbox

sandbox = Sandbox.create("interpreter", timeout_ms=300_000)
copy = saved = None
try:
    sandbox.fs.write("/tmp/state.txt", "written before the pause\n")
    # A process that must survive the pause.
    sandbox.process.exec_("nohup sleep 600 >/dev/null 2>&1 </dev/null &")

    sandbox.pause()
    sandbox.wait_for_status("paused")
    print("status:", sandbox.get_info().status)
    sandbox.resume()
    sandbox.wait_for_status("running")
    print(sandbox.fs.read("/tmp/state.txt").strip())
    print("sleep still running:", sandbox.process.exec_("pgrep -x sleep").exit_code == 0)

    # On the container runtime a snapshot holds files, not processes.
    # Names are unique in a project.
    saved = sandbox.snapshot("my-app-%d" % time.time(), pool_size=2)
    Sandbox.wait_for_snapshot(saved.id)
    copy = Sandbox.restore(saved.id)
    print("restored", copy.sandbox_id, "from", saved.id)
    print(copy.fs.read("/tmp/state.txt").strip())
finally:
    if copy is not None:
        copy.kill()
    sandbox.kill()
    # Deleting a snapshot never affects the sandboxes restored from it.
    if saved is not None:
        Sandbox.delete_snapshot(saved.id)
