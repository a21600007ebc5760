"""Issue 32: a refused value names its field as data, and each surface words it in its own terms.

The command line says `--num-warps 3` and `-c BLOCK=0`; the Python API says
`num_warps=3` and `constexprs['BLOCK']=0`.  The check words the message once, in
the caller's terms (core/words.py); the API no longer rewrites the command
line's text with a regex.
"""

from __future__ import annotations

import inspect

import pytest

import tritonscope
from tritonscope import api
from tritonscope.core.errors import KernelSpecError, UsageError
from tritonscope.core.words import api_terms, field_data, said
from tritonscope.inputs.kernels import Request, check_request
from tritonscope.pipeline.config import resolve


def test_said_spells_a_field_for_each_surface():
    assert said("num_warps", 3) == "--num-warps 3"
    assert said("args", "banana", key="x_ptr") == "--arg x_ptr=banana"
    assert said("constexprs", 0, key="BLOCK") == "-c BLOCK=0"
    assert said("options", 300, key="maxnreg") == "--maxnreg 300"
    assert said("options", "banana", key="enable_fp_fusion") == "-c enable_fp_fusion=banana"
    with api_terms():
        assert said("num_warps", 3) == "num_warps=3"
        assert said("args", "banana", key="x_ptr") == "args['x_ptr']='banana'"
        assert said("constexprs", 0, key="BLOCK") == "constexprs['BLOCK']=0"
        assert said("options", 300, key="maxnreg") == "options['maxnreg']=300"
        assert said("arch") == "arch"
    assert said("arch") == "--arch"  # the block ended: the command line's terms again


@pytest.mark.parametrize("request_kw, field, cli_words, api_words", [
    (dict(num_warps=3), "num_warps", "--num-warps 3 is not a power of two", "num_warps=3 is not a power of two"),
    (dict(num_stages=0), "num_stages", "--num-stages 0 must be at least 1", "num_stages=0 must be at least 1"),
    (dict(block=0), "block", "--block 0: a tile size", "block=0: a tile size"),
    (dict(arch=" "), "arch", "--arch is empty", "arch is empty"),
    (dict(args={"x_ptr": "banana"}), "args", "--arg x_ptr=banana: not a tensor",
     "args['x_ptr']='banana': not a tensor"),
    (dict(options={"maxnreg": 300}), "options", "--maxnreg 300: a register limit",
     "options['maxnreg']=300: a register limit"),
])
def test_a_refused_value_carries_its_field_and_is_worded_by_the_caller(request_kw, field, cli_words, api_words):
    req = Request(target="matmul", **request_kw)
    with pytest.raises(UsageError) as cli:
        resolve(req)
    with api_terms(), pytest.raises(UsageError) as api_err:
        resolve(req)
    assert cli.value.data["field"] == api_err.value.data["field"] == field
    assert cli_words in cli.value.message and api_words in api_err.value.message
    assert "--" not in api_err.value.message.replace("`", "")


def test_the_binding_words_its_refusals_in_the_api_terms_too():
    """A check made while binding (a constexpr of the wrong kind, a missing constexpr) speaks keywords."""
    with pytest.raises(KernelSpecError) as info:
        tritonscope.compile("matmul", constexprs={"BLOCK": "banana"})
    err = info.value
    assert err.data["field"] == "constexprs" and err.data["key"] == "BLOCK"
    assert "constexprs['BLOCK']='banana'" in err.message and "-c BLOCK" not in err.message + (err.hint or "")
    with pytest.raises(KernelSpecError) as info:
        check_request(Request(target="matmul"))  # fine on its own: the message below comes from the binding
        from tritonscope.pipeline.binding import build_spec

        build_spec(Request(target="matmul", constexprs={"BLOCK": "banana"}))
    assert "-c BLOCK=banana" in info.value.message  # the command line's words outside the API


def test_the_api_rewrites_no_message():
    source = inspect.getsource(api)
    assert "_CLI_WORDS" not in source and "_in_api_terms" not in source and "import re\n" not in source


def test_field_data_is_json_able():
    assert field_data("args", object(), key="x")["value"].startswith("<object")
    assert field_data("num_warps") == {"field": "num_warps"}


def test_request_and_config_are_one_record_checked_once():
    """Issue 32: the pipeline's Config is the Request, checked (no second record to keep in step)."""
    from tritonscope.pipeline.config import Config

    assert Config is Request
    unchecked = Request(target="matmul", arch="sm_90a", num_warps=3)  # a canonical arch is not a check
    with pytest.raises(UsageError, match="--num-warps 3"):
        resolve(unchecked)
    config = resolve(Request(target="matmul", arch="sm_90a", num_warps=4))
    assert config.checked and resolve(config) is config
    assert Request(**config.payload()) == config and Request(**config.payload()).checked  # a child's copy
