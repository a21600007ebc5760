"""Path redaction in every spelling a compile writes a path."""

from __future__ import annotations

from conftest import DATA

from tritonscope.pipeline.paths import relativize

FOLDER = "/tmp/été k"


def test_plain_and_octal_spellings():
    text = ('loc("/tmp/été k/va.py":8:0)\n\t.file\t1 "/tmp/\\303\\251t\\303\\251 k/va.py"\n'
            '\t//## File "/tmp/\\303\\251t\\303\\251 k/va.py", line 8\n!DIFile(directory: "/tmp/été k")\n'
            'loc("/tmp/été kk/other.py":1:0)')
    out = relativize(text, FOLDER)
    assert 'loc("./va.py":8:0)' in out
    assert '.file\t1 "./va.py"' in out and '//## File "./va.py", line 8' in out
    assert 'directory: ".")' in out
    assert "/tmp/été kk/other.py" in out  # a sibling folder is not ours


def test_dwarf_byte_strings_and_unit_length():
    ptx = (DATA / "stages" / "3.9" / "matmul_b16_sm90a" / "ptx").read_text()
    # the checked-in stage was compiled under /work/main/samples: its comp_dir is those bytes
    folder = "/work/main/samples"
    as_bytes = "\n".join(f".b8 {b}" for b in folder.encode())
    assert _b8_values(ptx).find(folder.encode()) >= 0, as_bytes[:20]
    out = relativize(ptx, folder)
    assert _b8_values(out).find(folder.encode()) < 0
    assert _unit_length(ptx) - _unit_length(out) == len(folder) - 1
    assert relativize(ptx, "/not/there") == ptx


def _b8_values(text: str) -> bytes:
    return bytes(int(ln.split()[1]) for ln in text.splitlines() if ln.startswith(".b8 ") and int(ln.split()[1]) < 256)


def _unit_length(text: str) -> int:
    return next(int(ln.split()[1]) for ln in text.splitlines() if "Length of Unit" in ln)
