"""The documented examples (examples/python, examples/ts) and the seed
quickstart's code blocks, run as a user runs them — a separate `python3` /
`node` process configured only by LIZARD_API_URL, LIZARD_API_KEY and
LIZARD_PROJECT_ID — against the test lizardd, checking what they print.

The TypeScript examples need the built SDK (sdk/js/dist); the module builds
it (`npm ci && npm run build`) and links it into examples/ts (`npm install`)
when either is missing.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import lizard
from conftest import REPO, require_template

EXAMPLES = REPO / "examples"
SDK_JS = REPO / "sdk" / "js"
PY = "/usr/bin/python3"  # Debian's: the examples need nothing beyond the SDK
# Where the seed documents live when the repository sits next to them.
SEEDS = Path(os.environ.get("LIZARD_SEEDS_DIR", REPO.parent / "shared" / "seeds"))
INFO_LINE = re.compile(r"^(sb_[a-z0-9]+) interpreter running (container|microvm)$")


@pytest.fixture(scope="module")
def env(daemon, project_named):
    require_template("base")
    require_template("interpreter")
    project_named("proj_123")
    e = dict(os.environ, LIZARD_PROJECT_ID="proj_123")
    e.pop("LIZARD_REQUIRE_MICROVM", None)
    if not os.environ.get("LIZARD_TEST_INSTALLED_SDK"):
        e["PYTHONPATH"] = str(REPO / "sdk" / "python")
    return e


def npm(args, cwd):
    p = subprocess.run(["npm", *args, "--no-audit", "--no-fund"], cwd=cwd, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, "npm %s in %s failed:\n%s%s" % (" ".join(args), cwd, p.stdout,
                                                              p.stderr)


def prepare_ts_examples() -> None:
    """Node and npm present, sdk/js built and linked into examples/ts."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail("%s is not installed (Node >= 18 runs the TypeScript examples)" % tool,
                        pytrace=False)
    if not (SDK_JS / "dist" / "index.js").exists():
        if not (SDK_JS / "node_modules").is_dir():
            npm(["ci"], SDK_JS)
        npm(["run", "build"], SDK_JS)
    ts = EXAMPLES / "ts"
    if not (ts / "node_modules" / "@lizard-build" / "sdk" / "dist" / "index.js").exists():
        npm(["install"], ts)


@pytest.fixture(scope="module")
def node_env(env):
    prepare_ts_examples()
    return env


def run(argv, env, cwd, stdin=None, extra=None):
    e = dict(env, **(extra or {}))
    return subprocess.run(argv, cwd=cwd, env=e, input=stdin, capture_output=True, text=True,
                          timeout=300)


def run_ok(argv, env, cwd, stdin=None):
    p = run(argv, env, cwd, stdin)
    assert p.returncode == 0, "%s exited %d\nstdout:\n%s\nstderr:\n%s" % (
        argv, p.returncode, p.stdout, p.stderr)
    return p.stdout


# The seed calls it run-task.mjs.
TS_NAME = {"run_task": "run-task"}


def example(lang, name, request, drop=(), extra=None):
    """Run examples/python/NAME.py or examples/ts/NAME.mjs in its directory,
    without the variables in `drop`."""
    if lang == "python":
        env, argv, cwd = request.getfixturevalue("env"), [PY, name + ".py"], EXAMPLES / "python"
    else:
        env, cwd = request.getfixturevalue("node_env"), EXAMPLES / "ts"
        argv = ["node", TS_NAME.get(name, name) + ".mjs"]
    env = {k: v for k, v in env.items() if k not in drop}
    return run(argv, env, cwd, extra=extra)


def assert_gone(sandbox_id):
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.connect(sandbox_id)


def live_in(project):
    return {i.sandbox_id for i in lizard.Sandbox.list(project=project)}


# ---- examples/ ----

@pytest.mark.parametrize("lang", ["python", "ts"])
def test_quickstart(lang, request):
    p = example(lang, "quickstart", request)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    # print(stdout, stderr, exit_code): "1024\n" + " " + "" + " " + "0"
    assert lines[:4] == ["1024", "  0", "42", ""], p.stdout
    m = INFO_LINE.match(lines[4])
    assert m and len(lines) == 5, p.stdout
    assert_gone(m.group(1))  # killed in `finally`


@pytest.mark.parametrize("lang", ["python", "ts"])
def test_run_task(lang, env, request):
    before = live_in("proj_123")
    p = example(lang, "run_task", request)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ("{'total': 25}\n" if lang == "python" else "{ total: 25 }\n")
    runtime = lizard.Lizard("proj_123").create("tiny", timeout_ms=60_000)
    try:
        if runtime.get_info().runtime == "container":
            assert "warning: runtime is container, not microvm" in p.stderr
    finally:
        runtime.kill()
    assert live_in("proj_123") == before


@pytest.mark.parametrize("lang", ["python", "ts"])
def test_run_task_refuses_container_when_microvm_required(lang, env, request, make_sandbox):
    if make_sandbox("tiny").get_info().runtime == "microvm":
        pytest.skip("this host runs microvm sandboxes")
    before = live_in("proj_123")
    p = example(lang, "run_task", request, extra={"LIZARD_REQUIRE_MICROVM": "1"})
    assert p.returncode != 0
    assert "This task requires the microvm runtime (got container)" in p.stderr
    assert p.stdout == ""
    assert live_in("proj_123") == before  # the finally block still killed it


@pytest.mark.parametrize("lang", ["python", "ts"])
def test_run_task_needs_project(lang, request):
    p = example(lang, "run_task", request, drop=("LIZARD_PROJECT_ID",))
    assert p.returncode != 0
    assert "Set LIZARD_PROJECT_ID and LIZARD_API_KEY" in p.stderr


@pytest.mark.parametrize("lang", ["python", "ts"])
def test_ports(lang, request):
    p = example(lang, "ports", request)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    m = re.match(r"^http://3000-(sb_[a-z0-9]+)\.localhost:\d+/\?lizard_token=[0-9a-f]{16,}$", lines[0])
    assert m, p.stdout
    if lang == "ts":
        assert lines.pop(1) == "3000-%s.localhost" % m.group(1)
    assert lines[1:] == ["200 hello from port 3000", "without a token: 401"], p.stdout
    assert_gone(m.group(1))


@pytest.mark.parametrize("lang", ["python", "ts"])
def test_pause_snapshot(lang, request):
    p = example(lang, "pause_snapshot", request)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[:3] == ["status: paused", "written before the pause",
                         "sleep still running: " + ("True" if lang == "python" else "true")], \
        p.stdout + p.stderr
    m = re.match(r"^restored (sb_[a-z0-9]+) from (snap_[a-z0-9]+)$", lines[3])
    assert m and lines[4:] == ["written before the pause"], p.stdout
    assert_gone(m.group(1))
    with pytest.raises(lizard.NotFoundError):
        lizard.Sandbox.get_snapshot(m.group(2))


# ---- the seed quickstart's code blocks, verbatim ----

PY_CREATE_EXEC = '''from lizard import Sandbox
 
sandbox = Sandbox.create("interpreter", project_id="proj_123", timeout_ms=300_000)
try:
    result = sandbox.process.exec_("python -c 'print(2 ** 10)'")
    print(result.stdout, result.stderr, result.exit_code)
finally:
    sandbox.kill()
'''
PY_CREATE = 'sandbox = Sandbox.create("interpreter", project_id="proj_123", timeout_ms=300_000)\n'
PY_FILES = '''sandbox.fs.write("/tmp/task.py", "print(42)\\n")
result = sandbox.process.exec_("python /tmp/task.py")
print(result.stdout)
'''
PY_CONNECT = '''connected = Sandbox.connect(sandbox.sandbox_id)
print(connected.get_info())
'''

TS_HELLO = '''import { Sandbox } from '@lizard-build/sdk';
 
const sandbox = await Sandbox.create('base', { project: 'my-project' });
const { stdout } = await sandbox.process.exec('echo "hello from Lizard"');
console.log(stdout);            // hello from Lizard
await sandbox.kill();
'''
TS_CREATE_EXEC = '''import { Sandbox } from '@lizard-build/sdk';
 
const sandbox = await Sandbox.create('interpreter', {
  projectId: 'proj_123', timeoutMs: 300_000,
});
try {
  const result = await sandbox.process.exec("python -c 'print(2 ** 10)'");
  console.log(result.stdout, result.stderr, result.exitCode);
} finally {
  await sandbox.kill();
}
'''
TS_FILES = '''await sandbox.fs.write("/tmp/task.py", "print(42)\\n");
const result = await sandbox.process.exec("python /tmp/task.py");
console.log(result.stdout);
'''
TS_CONNECT = '''const connected = await Sandbox.connect(sandbox.sandboxId);
console.log(await connected.getInfo());
'''


def seed_text():
    if not SEEDS.is_dir():
        pytest.skip("seed documents not found in %s (set LIZARD_SEEDS_DIR)" % SEEDS)
    return "\n".join(p.read_text() for p in sorted(SEEDS.glob("*.txt")))


@pytest.mark.parametrize("block", [PY_CREATE_EXEC, PY_CREATE, PY_FILES, PY_CONNECT, TS_HELLO,
                                   TS_CREATE_EXEC, TS_FILES, TS_CONNECT])
def test_blocks_are_the_seeds_verbatim(block):
    assert block in seed_text()


def test_seed_python_create_exec(env):
    out = run_ok([PY, "-"], env, REPO, stdin=PY_CREATE_EXEC)
    assert out == "1024\n  0\n"


def test_seed_python_files_and_connect(env, project_named):
    # The files and connect blocks continue the quickstart's `sandbox`; the
    # kill at the end stands for its `finally`.
    script = "from lizard import Sandbox\n" + PY_CREATE + PY_FILES + PY_CONNECT + "sandbox.kill()\n"
    out = run_ok([PY, "-"], env, REPO, stdin=script)
    lines = out.splitlines()
    assert lines[:2] == ["42", ""], out
    m = re.match(r"^SandboxInfo\(sandbox_id='(sb_[a-z0-9]+)', project='(proj_[a-z0-9]+)', "
                 r"template='interpreter', status='running'", lines[2])
    assert m, out
    assert m.group(2) == project_named("proj_123").id
    assert_gone(m.group(1))


def node_module(code, env):
    # Code on stdin resolves '@lizard-build/sdk' from the working directory,
    # like a file saved in examples/ts.
    return run_ok(["node", "--input-type=module"], env, EXAMPLES / "ts", stdin=code)


def test_seed_ts_hello(node_env, project_named):
    project_named("my-project")
    assert node_module(TS_HELLO, node_env) == "hello from Lizard\n\n"


def test_seed_ts_create_exec(node_env):
    assert node_module(TS_CREATE_EXEC, node_env) == "1024\n  0\n"


def test_seed_ts_files_and_connect(node_env):
    create = TS_CREATE_EXEC.split("try {")[0]
    out = node_module(create + TS_FILES + TS_CONNECT + "await sandbox.kill();\n", node_env)
    assert out.startswith("42\n\n"), out
    assert re.search(r"sandboxId: '(sb_[a-z0-9]+)'", out), out
    assert "template: 'interpreter'" in out and "status: 'running'" in out, out
    assert_gone(re.search(r"sandboxId: '(sb_[a-z0-9]+)'", out).group(1))
