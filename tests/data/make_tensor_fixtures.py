#!/usr/bin/python3
"""Writes the tensor-file fixtures under tests/data/tensors/ (committed; the tests never run this).

Needs Debian's python3-numpy and python3-onnx:  apt-get install python3-numpy python3-onnx
Run from anywhere:                              /usr/bin/python3 tests/data/make_tensor_fixtures.py

Deterministic: fixed values or a fixed seed, so re-running it rewrites identical files.

  tensors/*.npy                 what np.save writes for each dtype vkfuse reads, versions 2.0 and 3.0,
                                and the cases it must refuse (big-endian, Fortran order, float64,
                                int64 values outside int32)
  tensors/*.pb                  ONNX TensorProto files, raw_data and the typed fields
  tensors/add_relu_matmul.onnx  z = Relu(Relu(x + b) @ W + c), y = Relu(x + b) @ W (Add, Relu, MatMul
                                only), with its input, numpy's outputs, a wrong-shape and a wrong-dtype
                                input, and the same data in ONNX's test_data_set_0 layout
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tensors")


def path(*parts):
    p = os.path.join(OUT, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


def save_npy(name, array, version=None):
    with open(path(name), "wb") as f:
        if version is None:
            np.save(f, array)
        else:
            np.lib.format.write_array(f, array, version=version)


def save_pb(name, tensor):
    with open(path(name), "wb") as f:
        f.write(tensor.SerializeToString())


def npy_fixtures():
    save_npy("f32_2x3.npy", (np.arange(6, dtype=np.float32) * 0.5 - 1.0).reshape(2, 3))
    save_npy("f16_5.npy", np.array([0.0, -1.5, 65504.0, 0.099975586, -0.0], dtype=np.float16))
    save_npy("i64_2x2.npy", np.array([[-(2**31), 2**31 - 1], [0, -7]], dtype=np.int64))
    save_npy("i32_scalar.npy", np.array(-42, dtype=np.int32))
    save_npy("bool_7.npy", np.array([True, False, True, True, False, False, True]))
    save_npy("u8_4.npy", np.array([0, 1, 200, 255], dtype=np.uint8))
    save_npy("i16_3.npy", np.array([-32768, 5, 32767], dtype=np.int16))
    save_npy("f32_empty_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    save_npy("f32_3_v2.npy", np.array([1.0, 2.0, 3.0], dtype=np.float32), version=(2, 0))
    save_npy("f32_3_v3.npy", np.array([1.0, 2.0, 3.0], dtype=np.float32), version=(3, 0))
    # What vkfuse refuses, as numpy writes it.
    save_npy("bad_big_endian.npy", np.array([1.0, 2.0], dtype=">f4"))
    save_npy("bad_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save_npy("bad_f64.npy", np.array([1.0, 2.0], dtype=np.float64))
    save_npy("bad_i64_overflow.npy", np.array([[0, 1, 2], [3, 2**31, 5]], dtype=np.int64))


def pb_fixtures():
    f32 = (np.arange(6, dtype=np.float32) * 0.5 - 1.0).reshape(2, 3)
    save_pb("f32_2x3_raw.pb", numpy_helper.from_array(f32, "t"))
    save_pb("f32_2x3_float_data.pb",
            helper.make_tensor("t", TensorProto.FLOAT, [2, 3], f32.flatten().tolist(), raw=False))
    save_pb("i64_2x2_int64_data.pb",
            helper.make_tensor("t", TensorProto.INT64, [2, 2], [-(2**31), 2**31 - 1, 0, -7], raw=False))
    save_pb("f16_5_raw.pb", numpy_helper.from_array(np.array([0.0, -1.5, 65504.0, 0.099975586, -0.0], np.float16), "t"))
    save_pb("bool_7_raw.pb", numpy_helper.from_array(np.array([True, False, True, True, False, False, True]), "t"))
    save_pb("i32_scalar_int32_data.pb", helper.make_tensor("t", TensorProto.INT32, [], [-42], raw=False))
    # 6 floats declared, 5 given.
    bad = helper.make_tensor("t", TensorProto.FLOAT, [2, 3], [1, 2, 3, 4, 5, 6], raw=False)
    del bad.float_data[5]
    save_pb("bad_f32_size_mismatch.pb", bad)


def model_fixtures():
    rng = np.random.default_rng(20240607)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    c = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("Add", ["x", "b"], ["xb"], name="add_bias"),
        helper.make_node("Relu", ["xb"], ["h"], name="relu_0"),
        helper.make_node("MatMul", ["h", "W"], ["y"], name="matmul"),
        helper.make_node("Add", ["y", "c"], ["yc"], name="add_c"),
        helper.make_node("Relu", ["yc"], ["z"], name="relu_1"),
    ]
    graph = helper.make_graph(
        nodes, "add_relu_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
        initializer=[numpy_helper.from_array(b, "b"), numpy_helper.from_array(w, "W"),
                     numpy_helper.from_array(c, "c")])
    model = helper.make_model(graph, producer_name="vkfuse make_tensor_fixtures.py",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path("add_relu_matmul.onnx"))

    y = np.maximum(x + b, 0.0) @ w
    z = np.maximum(y + c, 0.0)
    folder = "add_relu_matmul"
    shutil.rmtree(os.path.join(OUT, folder), ignore_errors=True)
    save_npy(os.path.join(folder, "x.npy"), x)
    save_npy(os.path.join(folder, "x_wrong_shape.npy"), rng.standard_normal((3, 4)).astype(np.float32))
    save_npy(os.path.join(folder, "x_wrong_dtype.npy"), x.astype(np.float16))
    save_npy(os.path.join(folder, "reference", "y.npy"), y.astype(np.float32))
    save_npy(os.path.join(folder, "reference", "z.npy"), z.astype(np.float32))
    # A reference that must fail: z off by 1% of its largest magnitude at one element.
    z_off = z.astype(np.float32).copy()
    z_off.flat[4] += 0.01 * np.abs(z).max()
    save_npy(os.path.join(folder, "wrong_reference", "y.npy"), y.astype(np.float32))
    save_npy(os.path.join(folder, "wrong_reference", "z.npy"), z_off)
    # ONNX's own test-data layout: TensorProto files named by position.
    save_pb(os.path.join(folder, "test_data_set_0", "input_0.pb"), numpy_helper.from_array(x, "x"))
    save_pb(os.path.join(folder, "test_data_set_0", "output_0.pb"), numpy_helper.from_array(y.astype(np.float32), "y"))
    save_pb(os.path.join(folder, "test_data_set_0", "output_1.pb"), numpy_helper.from_array(z.astype(np.float32), "z"))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    npy_fixtures()
    pb_fixtures()
    model_fixtures()
    print("wrote", OUT)
