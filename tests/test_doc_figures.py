"""The README's figures about the data are the data's (scripts/doc_figures.py --write fixes drift)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_figures_match_the_data() -> None:
    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    assert len(module.FIGURES) >= 3
    assert [(f.name, stated, value) for f, stated, value in module.drifted()] == []


def test_the_sweep_file_in_the_docs_is_accepted(tmp_path: Path) -> None:
    from rlvr.bench.sweep import load_config

    text = (ROOT / "docs" / "sweep.md").read_text(encoding="utf-8")
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "sweep.toml").write_text(block)
    config = load_config(tmp_path / "sweep.toml")
    assert config.ks == [1, 8] and config.grid == {"temperature": [0.2, 0.8], "n": [8]}
    assert [p.label for p in config.policies] == ["tiny"]
