"""Issue 33: versions records and replays, managed environments and record paths, fuzzed (benchmarks/fuzz.py
--records runs 10,000 cases): a tampered record, a damaged environment or a hostile record path is refused with
a typed error or answered, never a crash (exit 1) or a hang.
"""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT
from tritonscope.core.errors import OutputError

sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz  # noqa: E402


def test_records_envs_and_record_paths_never_crash():
    result = fuzz.fuzz_records(cases=150, seed=7, limit=20.0)
    assert result["crashes"] == 0, "\n\n".join(result["first"])
    assert set(result["kinds"]) == set(fuzz.RECORD_KINDS)
    assert result["refused"] > 10 and result["explained"] > 10   # both refusals and answers are walked


def test_a_record_path_with_a_nul_character_is_an_output_error(tmp_path):
    """os.stat raises ValueError (not OSError) on a NUL: it was exit 1."""
    from tritonscope.core.output import check_folder

    with pytest.raises(OutputError, match="NUL"):
        check_folder(str(tmp_path / "a\x00b"), what="record")


@pytest.mark.parametrize("name", ["", " ", "."])
def test_an_empty_record_path_never_writes_into_the_current_folder(tmp_path, monkeypatch, name):
    """`Path("")` is the current folder: the fuzz wrote a record's manifest.json into the repository's root."""
    from tritonscope.core.errors import OutputError
    from tritonscope.core.output import check_folder

    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match="give it a folder of its own"):
        check_folder(name, force=True, holds="manifest.json", what="record")
    assert not any(tmp_path.iterdir())
