"""A project may be named by id, slug or name wherever the SDK takes one
(`project_id="proj_123"` in the seed quickstart names a project whose name,
not id, is proj_123 on a fresh server)."""

import pytest

import lizard
from conftest import unique


def test_project_id_accepts_name_slug_and_id(project_named, make_sandbox):
    p = project_named("proj_123")
    assert p.id != "proj_123" and p.id.startswith("proj_")
    assert p.slug == "proj-123"  # derived from the name
    for ref in ("proj_123", p.slug, p.id):
        sb = make_sandbox("tiny", project_id=ref)
        assert sb.get_info().project == p.id, ref
        assert sb.sandbox_id in [i.sandbox_id for i in lizard.Sandbox.list(project=ref)], ref
        sb.kill()


def test_explicit_slug_and_client_project(admin, make_sandbox):
    p = admin.create_project(unique("Data Team"), slug=unique("data-team"))
    for ref in (p.name, p.slug, p.id):
        sb = lizard.Lizard(ref).create("tiny", timeout_ms=60_000)
        make_sandbox.made.append(sb)
        assert sb.get_info().project == p.id, ref
        sb.kill()


def test_unknown_project_reference_is_404(make_sandbox):
    with pytest.raises(lizard.NotFoundError) as e:
        make_sandbox("tiny", project_id=unique("no-such-project"))
    assert "not found" in str(e.value)
