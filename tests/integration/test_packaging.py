"""The Python SDK installs with plain `pip install ./sdk/python` on a host with
no PyPI (its build backend is in-tree, standard library only), and the
installed copy talks to a real lizardd."""
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_offline_and_use(daemon, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # No index at all: any download attempt fails the install.
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", str(ROOT / "sdk/python")],
                   check=True, cwd=tmp_path)
    script = (
        "import lizard, sys\n"
        "assert 'site-packages' in lizard.__file__, lizard.__file__\n"
        "with lizard.Sandbox.create('tiny') as sb:\n"
        "    print(sb.process.exec_(['echo', 'installed']).stdout, end='')\n"
    )
    out = subprocess.run([str(py), "-c", script], check=True, cwd=tmp_path, text=True,
                         capture_output=True, env=dict(os.environ))
    assert out.stdout == "installed\n", out.stderr
