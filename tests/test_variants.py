"""Variants are patch series; a patch that does not apply fails with its name
and the rejected file, and leaves nothing half-applied."""

import subprocess

import pytest

from hotline.errors import HotlineError
from hotline.kernel import variants
from hotline.kernel.variants import Variant, apply_patches


def test_baseline_has_only_the_shared_counters_patches():
    baseline = variants.load_variant("baseline")
    assert baseline.patches and baseline.config_fragment is None
    assert all(p.parent == variants.VARIANTS.parent / "patches" / "counters"
               for p in baseline.patches)
    assert [baseline.input_key(p).split("/")[:2] for p in baseline.patches][0] == \
        ["patches", "counters"]
    assert "baseline" in variants.available_variants()


def test_every_variant_starts_with_the_counters_series():
    counters = variants.load_variant("baseline").patches
    for name in variants.available_variants():
        assert variants.load_variant(name).patches[:len(counters)] == counters, name


def test_series_may_name_shared_patches_but_not_leave_the_tree(tmp_path, monkeypatch):
    (tmp_path / "patches" / "g").mkdir(parents=True)
    (tmp_path / "patches" / "g" / "0001-shared.patch").write_text("")
    (tmp_path / "variants" / "v").mkdir(parents=True)
    (tmp_path / "variants" / "v" / "series").write_text("../../patches/g/0001-shared.patch\n")
    monkeypatch.setattr(variants, "VARIANTS", tmp_path / "variants")
    v = variants.load_variant("v")
    assert [v.input_key(p) for p in v.patches] == ["patches/g/0001-shared.patch"]
    (tmp_path / "variants" / "v" / "series").write_text("../../../outside.patch\n")
    (tmp_path.parent / "outside.patch").write_text("")
    with pytest.raises(HotlineError, match="names '../../../outside.patch', which is outside"):
        variants.load_variant("v")


def test_unknown_variant_lists_available():
    with pytest.raises(HotlineError, match="unknown kernel variant 'nope'; available: .*baseline"):
        variants.load_variant("nope")


def test_series_naming_a_missing_patch(tmp_path, monkeypatch):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "series").write_text("0001-real.patch\n# comment\n0002-missing.patch\n")
    (tmp_path / "v" / "0001-real.patch").write_text("")
    monkeypatch.setattr(variants, "VARIANTS", tmp_path)
    with pytest.raises(HotlineError, match="names '0002-missing.patch'"):
        variants.load_variant("v")


def shared_group(root):
    """kernel-patches/ with a group `g` of two patches listed in g/series."""
    (root / "patches" / "g").mkdir(parents=True)
    for name in ("0001-a.patch", "0002-b.patch"):
        (root / "patches" / "g" / name).write_text("")
    (root / "patches" / "g" / "series").write_text("0001-a.patch\n0002-b.patch\n")
    (root / "patches" / "t").mkdir()
    (root / "patches" / "t" / "0001-topic.patch").write_text("")
    (root / "variants" / "v").mkdir(parents=True)
    return root / "variants"


def test_a_series_includes_another_in_its_place(tmp_path, monkeypatch):
    monkeypatch.setattr(variants, "VARIANTS", shared_group(tmp_path))
    (tmp_path / "variants" / "v" / "series").write_text(
        "# the group first\ninclude ../../patches/g/series  # shared\n"
        "../../patches/t/0001-topic.patch\n")
    v = variants.load_variant("v")
    assert [v.input_key(p) for p in v.patches] == [
        "patches/g/0001-a.patch", "patches/g/0002-b.patch", "patches/t/0001-topic.patch"]
    # The included series decides the order, so it is an input of the kernel.
    assert [v.input_key(p) for p in v.input_files()] == [
        "variants/v/series", "patches/g/series", "patches/g/0001-a.patch",
        "patches/g/0002-b.patch", "patches/t/0001-topic.patch"]


def test_including_a_missing_series(tmp_path, monkeypatch):
    monkeypatch.setattr(variants, "VARIANTS", shared_group(tmp_path))
    (tmp_path / "variants" / "v" / "series").write_text("include ../../patches/h/series\n")
    with pytest.raises(HotlineError, match=r"v/series: includes '../../patches/h/series', "
                                           r"which does not exist$"):
        variants.load_variant("v")


def test_an_include_cycle_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(variants, "VARIANTS", shared_group(tmp_path))
    (tmp_path / "variants" / "v" / "series").write_text("include ../../patches/g/series\n")
    (tmp_path / "patches" / "g" / "series").write_text("0001-a.patch\ninclude ../../variants/v/series\n")
    with pytest.raises(HotlineError, match=r"include cycle: variants/v/series -> patches/g/series "
                                           r"-> variants/v/series$"):
        variants.load_variant("v")
    (tmp_path / "patches" / "g" / "series").write_text("include series\n")
    with pytest.raises(HotlineError, match=r"include cycle: .* -> patches/g/series -> "
                                           r"patches/g/series$"):
        variants.load_variant("v")


def test_a_patch_named_twice(tmp_path, monkeypatch):
    monkeypatch.setattr(variants, "VARIANTS", shared_group(tmp_path))
    (tmp_path / "variants" / "v" / "series").write_text(
        "include ../../patches/g/series\n../../patches/g/0002-b.patch\n")
    with pytest.raises(HotlineError, match="names '../../patches/g/0002-b.patch', which the "
                                           "series already applies"):
        variants.load_variant("v")


def test_the_command_prints_the_patches(capsys):
    assert variants.main(["baseline"]) == 0
    assert capsys.readouterr().out.split() == [str(p) for p in
                                               variants.load_variant("baseline").patches]
    assert variants.main(["nope"]) == 1
    assert "unknown kernel variant 'nope'" in capsys.readouterr().err


def make_tree(root):
    (root / "mm").mkdir(parents=True)
    (root / "mm" / "rmap.c").write_text("line one\nline two\nline three\n")
    (root / "mm" / "filemap.c").write_text("alpha\nbeta\ngamma\n")
    return root


def diff(tmp_path, name, path, old, new):
    a, b = tmp_path / "a", tmp_path / "b"
    for side, text in ((a, old), (b, new)):
        (side / path).parent.mkdir(parents=True, exist_ok=True)
        (side / path).write_text(text)
    out = subprocess.run(["diff", "-u", f"a/{path}", f"b/{path}"], cwd=tmp_path,
                         capture_output=True, text=True).stdout
    patch = tmp_path / name
    patch.write_text(out)
    return patch


def test_patches_apply_in_order_through_hard_links(tmp_path):
    pristine = make_tree(tmp_path / "pristine")
    tree = tmp_path / "tree"
    subprocess.run(["cp", "-al", str(pristine), str(tree)], check=True)
    p1 = diff(tmp_path, "1.patch", "mm/rmap.c", "line one\nline two\nline three\n",
              "line one\nline 2\nline three\n")
    p2 = diff(tmp_path, "2.patch", "mm/rmap.c", "line one\nline 2\nline three\n",
              "line one\nline 2\nline 3\n")
    apply_patches(Variant("v", (p1, p2), None), tree)
    assert (tree / "mm" / "rmap.c").read_text() == "line one\nline 2\nline 3\n"
    # The hard-linked pristine source is untouched.
    assert (pristine / "mm" / "rmap.c").read_text() == "line one\nline two\nline three\n"


def test_patch_that_does_not_apply_names_patch_and_file(tmp_path):
    tree = make_tree(tmp_path / "tree")
    good = diff(tmp_path, "0001-good.patch", "mm/rmap.c", "line one\nline two\nline three\n",
                "line one\nline 2\nline three\n")
    bad = diff(tmp_path, "0002-bad.patch", "mm/filemap.c", "alpha\nBETA\ngamma\n",
               "alpha\nBETA!\ngamma\n")
    with pytest.raises(HotlineError) as e:
        apply_patches(Variant("v", (good, bad), None), tree)
    assert str(e.value) == ("variant v: patch 0002-bad.patch does not apply: "
                            "rejected in mm/filemap.c")
    assert (tree / "mm" / "filemap.c").read_text() == "alpha\nbeta\ngamma\n"
    assert not list(tree.rglob("*.rej")) and not list(tree.rglob("*.orig"))
