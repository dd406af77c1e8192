"""The Python module against the reference outputs in tests/data (run by CTest: python/pytest)."""
import os

import numpy as np
import pytest

import vkfuse

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
CACHE = os.environ.get("VKFUSE_CACHE_DIR", "")


def model_dir(name):
    return os.path.join(DATA, "models", name)


def session(name, **kwargs):
    return vkfuse.InferenceSession(os.path.join(model_dir(name), "model.onnx"), cache_dir=CACHE, **kwargs)


def close_to(got, want, tolerance):
    return np.max(np.abs(got - want)) <= tolerance * np.max(np.abs(want))


def test_version_and_devices():
    assert vkfuse.__version__.count(".") == 2
    devices = vkfuse.get_devices()
    assert devices and sum(d["default"] for d in devices) == 1
    assert all(d["name"] and d["api_version"] for d in devices)


@pytest.mark.parametrize("name", ["tiny_cnn", "tiny_transformer"])
@pytest.mark.parametrize("precision,tolerance", [("fp32", 1e-4), ("fp16", 3e-2)])
def test_matches_reference(name, precision, tolerance):
    s = session(name, precision=precision)
    (x,) = s.get_inputs()
    (y,) = s.get_outputs()
    assert (x.name, x.type, x.shape) == ("input", "tensor(float)", [1, 3, 32, 32])
    assert y.type == "tensor(float)"
    inp = np.load(os.path.join(model_dir(name), "input.npy"))
    want = np.load(os.path.join(model_dir(name), "output.npy"))
    (got,) = s.run(None, {"input": inp})
    assert got.dtype == np.float32 and got.shape == want.shape and list(got.shape) == y.shape
    assert close_to(got, want, tolerance)
    assert s.precision == precision and s.fusion and s.dispatch_count > 0 and s.device
    assert s.plan and all(g["label"] and g["ops"] > 0 for g in s.plan)
    assert s.last_gpu_ms >= 0 and s.create_ms > 0
    # The output owns its memory: it survives the next run and the session.
    (again,) = s.run(["output"], {"input": inp})
    del s
    assert np.array_equal(got, again)


def test_fused_and_unfused_agree():
    inp = np.load(os.path.join(model_dir("tiny_cnn"), "input.npy"))
    fused = session("tiny_cnn")
    unfused = session("tiny_cnn", fusion=False)
    assert unfused.dispatch_count > fused.dispatch_count
    (a,) = fused.run(None, {"input": inp})
    (b,) = unfused.run(None, {"input": inp})
    assert close_to(a, b, 1e-5)


def test_non_contiguous_input_is_taken_in_c_order():
    s = session("tiny_cnn")
    inp = np.load(os.path.join(model_dir("tiny_cnn"), "input.npy"))
    transposed = np.ascontiguousarray(inp.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not transposed.flags.c_contiguous
    (a,) = s.run(None, {"input": inp})
    (b,) = s.run(None, {"input": transposed})
    assert np.array_equal(a, b)


def test_symbolic_dims():
    path = os.path.join(DATA, "onnx", "bad", "symbolic_dim.onnx")
    declared = vkfuse.inspect(path)
    assert declared["inputs"][0].shape == ["batch", 3]
    with pytest.raises(vkfuse.Error, match="'batch'") as e:
        vkfuse.InferenceSession(path, cache_dir=CACHE)
    assert e.value.code == "InvalidArgument"
    s = vkfuse.InferenceSession(path, batch=2, cache_dir=CACHE)
    assert s.get_inputs()[0].shape == [2, 3]
    s = vkfuse.InferenceSession(path, input_shapes={"x": [5, 3]}, cache_dir=CACHE)
    (y,) = s.run(None, {"x": np.ones((5, 3), np.float32)})
    assert y.shape[0] == 5


def test_errors_name_what_is_wrong():
    s = session("tiny_cnn")
    with pytest.raises(vkfuse.Error, match=r"input 'input' has shape \[1,3,32,31\]; the model takes \[1,3,32,32\]"):
        s.run(None, {"input": np.zeros((1, 3, 32, 31), np.float32)})
    with pytest.raises(vkfuse.Error, match="input 'input' is float64; the model takes float32"):
        s.run(None, {"input": np.zeros((1, 3, 32, 32))})
    with pytest.raises(vkfuse.Error, match="'nope' is not an input of the model \\(inputs: 'input'\\)"):
        s.run(None, {"nope": np.zeros(1, np.float32)})
    with pytest.raises(vkfuse.Error, match="'nope' is not an output"):
        s.run(["nope"], {"input": np.zeros((1, 3, 32, 32), np.float32)})
    with pytest.raises(vkfuse.Error, match="input"):
        s.run(None, {})
    with pytest.raises(vkfuse.Error, match="no such file") as e:
        vkfuse.InferenceSession("/nonexistent/model.onnx")
    assert e.value.code == "NotFound"
    with pytest.raises(vkfuse.Error, match="precision 'int8'"):
        session("tiny_cnn", precision="int8")
    assert issubclass(vkfuse.Error, RuntimeError)
