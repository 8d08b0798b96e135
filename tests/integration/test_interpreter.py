"""The `interpreter` template: base plus `python`, the scientific stack with
matplotlib drawing to files (Agg), requests and the everyday CLI tools."""

import pytest

from conftest import TEMPLATE_DIR


def run(sb, cmd, **kw):
    r = sb.process.exec_(cmd, **kw)
    assert r.exit_code == 0, (cmd, r.stdout, r.stderr)
    return r.stdout


@pytest.mark.parametrize("user", ["root", "user"])
def test_python_and_the_scientific_stack(interpreter, user):
    code = ("import numpy, pandas, scipy.stats, requests, matplotlib; "
            "print(matplotlib.get_backend(), int(numpy.arange(5).sum()), "
            "int(pandas.Series([1, 2]).sum()), round(scipy.stats.norm.cdf(0), 2))")
    assert run(interpreter, ["python", "-c", code], user=user) == "agg 10 3 0.5\n"


def test_plot_to_a_file_as_user(interpreter):
    code = ("import matplotlib.pyplot as plt; plt.plot([1, 3, 2]); "
            "plt.savefig('/home/user/plot.png')")
    run(interpreter, ["python", "-c", code], user="user")
    st = interpreter.fs.stat("/home/user/plot.png")
    assert st.size > 1000 and st.uid == 1000
    assert interpreter.fs.read_bytes("/home/user/plot.png")[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_tools_and_user(interpreter):
    for tool in ("git", "curl", "jq", "ps", "less", "nano", "python3", "python"):
        assert run(interpreter, ["sh", "-c", "command -v " + tool]).strip(), tool
    assert run(interpreter, "echo '{\"a\": [1, 2]}' | jq -c '.a'") == "[1,2]\n"
    assert run(interpreter, ["id", "-u"], user="user") == "1000\n"
    assert run(interpreter, "echo $HOME", user="user") == "/home/user\n"


def test_listed_with_size_and_build_time(admin):
    t = {t.name: t for t in admin.templates()}["interpreter"]
    assert t.size_bytes > 100 * 2**20 and t.build_seconds > 0
    assert (TEMPLATE_DIR / "interpreter" / "meta.json").exists()
