#!/usr/bin/python3
"""Writes the small ONNX models the importer tests use, under tests/data/onnx/.

Each valid model is a folder in the layout of ONNX's own test data:
    <name>/model.onnx
    <name>/test_data_set_<k>/input_<i>.pb, output_<j>.pb   (TensorProto files, named after the graph's
                                                          inputs and outputs)
Expected outputs are computed here with numpy (float32), independently of vkfuse. Bad models (truncated,
not protobuf, missing initializer, bad dims, bad external data, unsupported ops) are under bad/.

Needs Debian's python3-onnx and python3-numpy (only to regenerate; the tests read the files):
    /usr/bin/python3 tests/data/make_onnx_test_models.py
Fixed seeds: running it again writes the same bytes.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx")
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def rng(seed):
    return np.random.default_rng(seed)


def const(name, array, raw=True):
    """An initializer from a numpy array: raw_data by default, the typed field with raw=False."""
    array = np.asarray(array)
    if raw:
        return numpy_helper.from_array(array, name)
    dtype = helper.np_dtype_to_tensor_dtype(array.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") \
        else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype]
    return helper.make_tensor(name, dtype, array.shape, array.flatten().tolist())


def value_info(name, array_or_shape, elem=TensorProto.FLOAT):
    shape = array_or_shape.shape if hasattr(array_or_shape, "shape") else array_or_shape
    return helper.make_tensor_value_info(name, elem, list(shape))


def empty_tensor(name, elem, dims):
    """A TensorProto header with no data (for external data, and dims no data could match)."""
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(dims)
    return t


def elem_of(array):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.asarray(array).dtype]


def make_model(nodes, inputs, outputs, initializers=(), opset=13, name="test"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="vkfuse-tests")
    model.ir_version = 8
    return model


def save(name, model, feeds, expected, check=True):
    """Writes <name>/model.onnx and one test data set per (feeds, expected) pair."""
    folder = os.path.join(ROOT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for k, (ins, outs) in enumerate(zip(feeds, expected)):
        data = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(data)
        for i, (n, a) in enumerate(ins.items()):
            with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())
        for j, (n, a) in enumerate(outs.items()):
            with open(os.path.join(data, "output_%d.pb" % j), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def f32(a):
    return np.asarray(a, dtype=np.float32)


# --- Elementwise chain (opset 13), with typed-field and raw initializers --------------------------
def elementwise_chain():
    x = f32(rng(1).uniform(-3, 3, (2, 3, 5)))
    bias = f32(rng(2).uniform(-1, 1, (5,)))
    two = f32(2.0)
    lo, hi = f32(-0.5), f32(0.8)
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["m"], name="scale"),
        helper.make_node("Add", ["m", "bias"], ["a"], name="shift"),
        helper.make_node("LeakyRelu", ["a"], ["l"], name="leaky", alpha=0.2),
        helper.make_node("HardSigmoid", ["l"], ["h"], name="hsig", alpha=0.3, beta=0.4),
        helper.make_node("Clip", ["a", "lo", "hi"], ["c"], name="clip"),
        helper.make_node("Max", ["h", "c", "x"], ["mx"], name="max3"),
        helper.make_node("Sum", ["mx", "c", "h"], ["s"], name="sum3"),
        helper.make_node("Mean", ["s", "x"], ["mean"], name="mean2"),
        helper.make_node("Identity", ["mean"], ["id"], name="identity"),
        helper.make_node("Dropout", ["id"], ["d"], name="dropout"),
        helper.make_node("Tanh", ["d"], ["y"], name="tanh"),
        helper.make_node("Greater", ["x", "bias"], ["g"], name="greater"),
        helper.make_node("Neg", ["x"], ["nx"], name="neg"),
        helper.make_node("Where", ["g", "x", "nx"], ["z"], name="where"),
    ]
    model = make_model(nodes, [value_info("x", x)], [value_info("y", x), value_info("z", x)],
                       [const("two", two, raw=False), const("bias", bias), const("lo", lo, raw=False), const("hi", hi)])
    a = x * two + bias
    h = np.clip(0.3 * np.where(a >= 0, a, 0.2 * a) + 0.4, 0, 1)
    c = np.clip(a, lo, hi)
    mx = np.maximum(np.maximum(h, c), x)
    s = mx + c + h
    y = np.tanh((s + x) / 2)
    z = np.where(x > bias, x, -x)
    save("elementwise_chain", model, [{"x": x}], [{"y": f32(y), "z": f32(z)}])


# --- NaN and Inf propagate through IEEE arithmetic --------------------------------------------------
def nan_inf():
    x = f32([np.nan, np.inf, -np.inf, 1.5, -2.0, 0.0, np.nan, 3.0])
    w = f32([1.0, np.inf, -np.inf, np.inf, np.nan, -0.0, 2.0, -np.inf])
    # x - w with two inputs: inf - inf = NaN. x - x tests the shader compiler too: Vulkan lets it fold
    # x - x to 0 unless the shader declares SignedZeroInfNanPreserve, which vkfuse does where the device
    # offers it. (x * 0 with a literal 0 is not here: Mesa 22.3's lavapipe folds it to 0 even then.)
    nodes = [
        helper.make_node("Add", ["x", "one"], ["a"], name="add"),
        helper.make_node("Mul", ["a", "three"], ["y"], name="mul"),
        helper.make_node("Sub", ["x", "w"], ["z"], name="sub"),
        helper.make_node("Sub", ["x", "x"], ["self_sub"], name="self_sub"),
    ]
    model = make_model(nodes, [value_info("x", x), value_info("w", w)],
                       [value_info("y", x), value_info("z", x), value_info("self_sub", x)],
                       [const("one", f32(1.0)), const("three", f32(3.0))])
    with np.errstate(invalid="ignore"):
        y, z, d = (x + 1) * 3, x - w, x - x
    save("nan_inf", model, [{"x": x, "w": w}], [{"y": f32(y), "z": f32(z), "self_sub": f32(d)}])


# --- The int64 shape chains torch emits (all folded at import) -------------------------------------
def shape_chain():
    x = f32(rng(3).uniform(-1, 1, (2, 3, 4, 5)))
    i64 = lambda v: np.asarray(v, dtype=np.int64)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["b"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["b", "axes0"], ["bu"], name="batch_1d"),
        helper.make_node("Constant", [], ["minus_one"], name="minus_one", value=numpy_helper.from_array(i64([-1]))),
        helper.make_node("Concat", ["bu", "minus_one"], ["flat_shape"], name="flat_shape", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="flatten"),
        # [2, 60] -> [2, 4, 15]: 15 = 60 / 4 computed from the shape
        helper.make_node("Shape", ["flat"], ["fs"], name="flat_shape_of"),
        helper.make_node("Slice", ["fs", "one", "two"], ["cols"], name="cols"),
        helper.make_node("Div", ["cols", "four"], ["per"], name="per_group"),
        helper.make_node("Concat", ["bu", "four", "per"], ["grouped_shape"], name="grouped_shape", axis=0),
        helper.make_node("Reshape", ["flat", "grouped_shape"], ["grouped"], name="group"),
        # torch's expand idiom: Where(Equal(shape, -1 * ones), ones, shape)
        helper.make_node("Shape", ["grouped"], ["gs"], name="gs"),
        helper.make_node("Shape", ["gs"], ["gs_len"], name="gs_len"),
        helper.make_node("ConstantOfShape", ["gs_len"], ["ones"], name="ones",
                         value=numpy_helper.from_array(i64([1]))),
        helper.make_node("Mul", ["ones", "minus_one"], ["neg_ones"], name="neg_ones"),
        helper.make_node("Equal", ["gs", "neg_ones"], ["is_neg"], name="is_neg"),
        helper.make_node("Where", ["is_neg", "ones", "gs"], ["same_shape"], name="same_shape"),
        helper.make_node("Reshape", ["grouped", "same_shape"], ["same"], name="same"),
        # positions: Cast(Range(0, 15, 1)) broadcast over the last axis
        helper.make_node("Squeeze", ["per", "axes0"], ["per_scalar"], name="per_scalar"),
        helper.make_node("Range", ["zero", "per_scalar", "one_scalar"], ["r"], name="range"),
        helper.make_node("Cast", ["r"], ["rf"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Add", ["same", "rf"], ["y"], name="add_positions"),
    ]
    inits = [const("zero", i64(0)), const("axes0", i64([0])), const("one", i64([1])), const("two", i64([2])),
             const("four", i64([4])), const("one_scalar", i64(1))]
    model = make_model(nodes, [value_info("x", x)], [value_info("y", (2, 4, 15))], inits)
    y = x.reshape(2, 4, 15) + np.arange(15, dtype=np.float32)
    save("shape_chain", model, [{"x": x}], [{"y": f32(y)}])


# --- The CPU folder's integer and float paths, checked through what the GPU computes with the results -----
def fold_ops():
    x = f32(rng(17).uniform(-1, 1, (2, 6)))
    i64 = lambda v: np.asarray(v, dtype=np.int64)
    a, b = i64([5, -7, 3]), i64([2, 3, -2])
    cf = f32([0.5, -1.5, 2.0, -0.25, 3.0, -4.0])
    n = helper.make_node
    nodes = [
        n("Add", ["a", "b"], ["p1"], name="add"), n("Div", ["a", "b"], ["p2"], name="div"),
        n("Mod", ["a", "b"], ["p3"], name="mod"),
        n("Less", ["a", "b"], ["lt"], name="less"), n("Neg", ["a"], ["na"], name="neg"), n("Abs", ["b"], ["ab"], name="abs"),
        n("Where", ["lt", "na", "ab"], ["p4"], name="where"),
        n("Concat", ["p1", "p2", "p3", "p4"], ["p"], name="concat_p", axis=0),
        n("Reshape", ["p", "shape26"], ["p2d"], name="reshape_p"), n("Cast", ["p2d"], ["pf"], name="cast_p", to=TensorProto.FLOAT),
        n("Add", ["x", "pf"], ["y1"], name="y1"),
        n("Range", ["ten", "zero", "minus3"], ["q1"], name="range"),
        n("Cast", ["fr"], ["q2"], name="truncate", to=TensorProto.INT64),
        n("Sub", ["b", "a"], ["d"], name="sub"), n("Sign", ["d"], ["q3"], name="sign"),
        n("Max", ["a", "b"], ["mx"], name="max"), n("Gather", ["mx", "idx"], ["q4"], name="gather"),
        n("Concat", ["q1", "q2", "q3", "q4"], ["q"], name="concat_q", axis=0),
        n("Reshape", ["q", "shape26"], ["q2d"], name="reshape_q"), n("Cast", ["q2d"], ["qf"], name="cast_q", to=TensorProto.FLOAT),
        n("Mul", ["x", "qf"], ["y2"], name="y2"),
        n("Sigmoid", ["cf"], ["sg"], name="sigmoid"), n("Abs", ["cf"], ["acf"], name="abs_f"), n("Sqrt", ["acf"], ["sq"], name="sqrt"),
        n("Mul", ["sg", "sq"], ["f"], name="mul_f"),
        n("Add", ["x", "f"], ["y3"], name="y3"),
    ]
    inits = [const("a", a), const("b", b), const("shape26", i64([2, 6])), const("ten", i64(10)), const("zero", i64(0)),
             const("minus3", i64(-3)), const("fr", f32([1.7, -1.7, 2.5])), const("idx", i64([0, 2])), const("cf", cf)]
    p = np.concatenate([a + b, np.fix(a / b).astype(np.int64), np.mod(a, b), np.where(a < b, -a, np.abs(b))])
    q = np.concatenate([np.arange(10, 0, -3), f32([1.7, -1.7, 2.5]).astype(np.int64), np.sign(b - a), np.maximum(a, b)[[0, 2]]])
    outs = {"y1": x + p.reshape(2, 6).astype(np.float32), "y2": x * q.reshape(2, 6).astype(np.float32),
            "y3": x + (1 / (1 + np.exp(-cf.astype(np.float64)))) * np.sqrt(np.abs(cf))}
    model = make_model(nodes, [value_info("x", x)], [value_info(k, v) for k, v in outs.items()], inits)
    save("fold_ops", model, [{"x": x}], [{k: f32(v) for k, v in outs.items()}])


# --- Slice and Split ---------------------------------------------------------------------------------
def slice_split():
    x = f32(rng(4).uniform(-1, 1, (4, 6, 8)))
    i64 = lambda v: np.asarray(v, dtype=np.int64)
    nodes = [
        helper.make_node("Slice", ["x", "s1_starts", "s1_ends", "s1_axes", "s1_steps"], ["y1"], name="two_axes"),
        helper.make_node("Slice", ["x", "s2_starts", "s2_ends", "s2_axes", "s2_steps"], ["y2"], name="reverse"),
        helper.make_node("Slice", ["x", "s3_starts", "s3_ends"], ["y3"], name="default_axes"),
        helper.make_node("Split", ["x", "split_sizes"], ["y4", "y5"], name="split_sizes", axis=2),
        helper.make_node("Split", ["x"], ["y6", "y7"], name="split_equal", axis=0),
        helper.make_node("Slice", ["x", "s4_starts", "s4_ends", "s4_axes", "s4_steps"], ["y8"], name="backward_step2"),
    ]
    inits = [const("s1_starts", i64([1, -5])), const("s1_ends", i64([INT64_MAX, -1])), const("s1_axes", i64([0, 2])),
             const("s1_steps", i64([1, 2])),
             const("s2_starts", i64([-1])), const("s2_ends", i64([INT64_MIN])), const("s2_axes", i64([1])),
             const("s2_steps", i64([-1])),
             const("s3_starts", i64([0, 2])), const("s3_ends", i64([3, 5])),
             const("s4_starts", i64([7])), const("s4_ends", i64([0])), const("s4_axes", i64([-1])),
             const("s4_steps", i64([-2])),
             const("split_sizes", i64([3, 5]))]
    outs = {"y1": x[1:, :, -5:-1:2], "y2": x[:, ::-1, :], "y3": x[0:3, 2:5], "y4": x[:, :, :3], "y5": x[:, :, 3:],
            "y6": x[:2], "y7": x[2:], "y8": x[:, :, 7:0:-2]}
    model = make_model(nodes, [value_info("x", x)], [value_info(n, a) for n, a in outs.items()], inits)
    save("slice_split", model, [{"x": x}], [{n: f32(a) for n, a in outs.items()}])


def split_opset11():
    """Opset 11: Split sizes and Squeeze/Unsqueeze axes are attributes."""
    x = f32(rng(5).uniform(-1, 1, (3, 1, 10)))
    nodes = [
        helper.make_node("Squeeze", ["x"], ["sq"], name="squeeze", axes=[1]),
        helper.make_node("Split", ["sq"], ["a", "b", "c"], name="split", axis=1, split=[2, 3, 5]),
        helper.make_node("Unsqueeze", ["b"], ["y1"], name="unsqueeze", axes=[0, 3]),
        helper.make_node("Relu", ["c"], ["y2"], name="relu"),
        helper.make_node("Flatten", ["x"], ["y3"], name="flatten", axis=2),
    ]
    sq = x[:, 0, :]
    outs = {"y1": sq[:, 2:5][None, :, :, None], "y2": np.maximum(sq[:, 5:], 0), "y3": x.reshape(3, 10)}
    model = make_model(nodes, [value_info("x", x)], [value_info(n, a) for n, a in outs.items()], opset=11)
    save("split_opset11", model, [{"x": x}], [{n: f32(a) for n, a in outs.items()}])


def split_opset18():
    """Opset 18: num_outputs, and a last part that is smaller."""
    x = f32(rng(6).uniform(-1, 1, (2, 5)))
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], name="split", axis=1, num_outputs=2)]
    outs = {"a": x[:, :3], "b": x[:, 3:]}
    model = make_model(nodes, [value_info("x", x)], [value_info(n, a) for n, a in outs.items()], opset=18)
    save("split_opset18", model, [{"x": x}], [{n: f32(a) for n, a in outs.items()}], check=False)


# --- MatMul + Add -------------------------------------------------------------------------------------
def matmul_add():
    x = f32(rng(7).uniform(-1, 1, (3, 7, 16)))
    w = f32(rng(8).uniform(-0.5, 0.5, (16, 5)))
    b = f32(rng(9).uniform(-0.5, 0.5, (5,)))
    p = f32(rng(10).uniform(-1, 1, (2, 3, 4, 5)))
    q = f32(rng(11).uniform(-1, 1, (5, 6)))
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="linear"),
        helper.make_node("Add", ["xw", "b"], ["xwb"], name="bias"),
        helper.make_node("Relu", ["xwb"], ["y"], name="relu"),
        helper.make_node("MatMul", ["p", "q"], ["z"], name="batched"),
    ]
    model = make_model(nodes, [value_info("x", x), value_info("p", p), value_info("q", q)],
                       [value_info("y", (3, 7, 5)), value_info("z", (2, 3, 4, 6))], [const("w", w), const("b", b)])
    save("matmul_add", model, [{"x": x, "p": p, "q": q}], [{"y": f32(np.maximum(x @ w + b, 0)), "z": f32(p @ q)}])


# --- External data ------------------------------------------------------------------------------------
def external_data():
    x = f32(rng(12).uniform(-1, 1, (3, 4)))
    w1 = f32(rng(13).uniform(-1, 1, (3, 4)))
    w2 = f32(rng(14).uniform(-1, 1, (4,)))
    folder = os.path.join(ROOT, "external_data")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    blob = bytes(16) + w1.tobytes() + w2.tobytes()  # 16 bytes of padding: offsets are tested too

    def external(name, array, offset, location="weights.bin", length=None):
        t = empty_tensor(name, elem_of(array), array.shape)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)),
                     ("length", str(array.nbytes if length is None else length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        return t

    nodes = [helper.make_node("Mul", ["x", "w1"], ["m"], name="mul"),
             helper.make_node("Add", ["m", "w2"], ["y"], name="add")]

    def model_with(w1_tensor):
        return make_model(nodes, [value_info("x", x)], [value_info("y", x)], [w1_tensor, external("w2", w2, 16 + w1.nbytes)])

    save("external_data", model_with(external("w1", w1, 16)), [{"x": x}], [{"y": f32(x * w1 + w2)}], check=False)
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(blob)
    bad = os.path.join(ROOT, "bad")
    os.makedirs(bad, exist_ok=True)
    with open(os.path.join(bad, "weights.bin"), "wb") as f:
        f.write(blob)
    onnx.save(model_with(external("w1", w1, 16, location="missing.bin")), os.path.join(bad, "external_missing.onnx"))
    onnx.save(model_with(external("w1", w1, len(blob) - 8)), os.path.join(bad, "external_out_of_range.onnx"))
    onnx.save(model_with(external("w1", w1, 16, location="../external_data/weights.bin")),
              os.path.join(bad, "external_escape.onnx"))
    onnx.save(model_with(external("w1", w1, 16, location="/etc/hostname")), os.path.join(bad, "external_absolute.onnx"))
    onnx.save(model_with(external("w1", w1, 16, length=12)), os.path.join(bad, "external_wrong_length.onnx"))


# --- Bad models ---------------------------------------------------------------------------------------
def bad_models():
    bad = os.path.join(ROOT, "bad")
    os.makedirs(bad, exist_ok=True)
    x = f32(np.ones((2, 3)))
    relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]

    def write(name, model):
        onnx.save(model, os.path.join(bad, name))

    good = make_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [value_info("x", x)], [value_info("y", x)],
                      [const("w", f32(rng(15).uniform(-1, 1, (2, 3))))])
    data = good.SerializeToString()
    with open(os.path.join(bad, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(bad, "not_protobuf.onnx"), "wb") as f:
        f.write(b"this is a text file, not an ONNX model\n")
    no_graph = onnx.ModelProto()  # valid protobuf, but no graph
    no_graph.ir_version = 8
    no_graph.opset_import.add().version = 13
    write("no_graph.onnx", no_graph)
    write("missing_initializer.onnx", make_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                                 [value_info("x", x)], [value_info("y", x)]))
    write("negative_dim.onnx", make_model(relu, [value_info("x", (2, -3))], [value_info("y", (2, 3))]))
    write("zero_dim.onnx", make_model(relu, [value_info("x", (0, 3))], [value_info("y", (0, 3))]))
    write("overflow_dim.onnx", make_model(relu, [value_info("x", (1 << 40, 1 << 40))], [value_info("y", (2, 3))]))
    huge = empty_tensor("w", TensorProto.FLOAT, [1 << 62, 4])
    write("overflow_initializer.onnx", make_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                                  [value_info("x", x)], [value_info("y", x)], [huge]))
    short = empty_tensor("w", TensorProto.FLOAT, [2, 3])
    short.raw_data = np.zeros(4, np.float32).tobytes()
    write("short_raw_data.onnx", make_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                                            [value_info("x", x)], [value_info("y", x)], [short]))
    write("rank_mismatch.onnx", make_model(relu, [value_info("x", x)], [value_info("y", (2, 3, 1))]))
    write("symbolic_dim.onnx", make_model(relu, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])]))
    write("opset_10.onnx", make_model(relu, [value_info("x", x)], [value_info("y", x)], opset=10))
    write("reshape_mismatch.onnx", make_model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                                              [value_info("x", x)], [value_info("y", (4, 2))],
                                              [const("shape", np.asarray([4, 2], np.int64))]))
    write("gather_out_of_range.onnx", make_model([helper.make_node("Gather", ["x", "index"], ["y"], name="pick", axis=1)],
                                                 [value_info("x", x)], [value_info("y", (2,))],
                                                 [const("index", np.asarray(-4, np.int64))]))
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["v1", "i1"], name="topk_a", axis=1),
        helper.make_node("Relu", ["v1"], ["r"], name="after_topk"),
        helper.make_node("TopK", ["r", "k"], ["v2", "i2"], name="topk_b", axis=1),
        helper.make_node("Einsum", ["x", "x"], ["e"], name="einsum", equation="ij,ij->i"),
        helper.make_node("FusedGelu", ["x"], ["g"], name="custom", domain="com.example"),
        helper.make_node("Add", ["x", "x"], ["y"], name="fine"),
    ]
    model = make_model(nodes, [value_info("x", x)],
                       [value_info("y", x), value_info("v2", (2, 1)), value_info("e", (2,)), value_info("g", x)],
                       [const("k", np.asarray([1], np.int64))])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    write("unsupported_ops.onnx", model)


# --- Node names: missing and duplicate ones are made unique ----------------------------------------
def node_names():
    x = f32(rng(16).uniform(-1, 1, (2, 3)))
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Neg", ["a"], ["b"], name="dup"),
             helper.make_node("Abs", ["b"], ["c"], name="dup"),
             helper.make_node("Exp", ["c"], ["y"])]
    model = make_model(nodes, [value_info("x", x)], [value_info("y", x)])
    save("node_names", model, [{"x": x}], [{"y": f32(np.exp(np.abs(-np.maximum(x, 0))))}])


# --- numpy references of the NN ops --------------------------------------------------------------------
def conv2d(x, w, b, pads=(0, 0, 0, 0), strides=(1, 1), dil=(1, 1), group=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - (kw - 1) * dil[1] - 1) // strides[1] + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dil[0]:i * dil[0] + strides[0] * (oh - 1) + 1:strides[0],
                           j * dil[1]:j * dil[1] + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, w[g * mg:(g + 1) * mg, :, i, j])
    return out + (0 if b is None else b[None, :, None, None])


def conv_transpose2d(x, w, b, pads=(0, 0, 0, 0), strides=(1, 1), dil=(1, 1), output_padding=(0, 0)):
    n, c, h, wd = x.shape
    _, m, kh, kw = w.shape
    fh = (h - 1) * strides[0] + (kh - 1) * dil[0] + 1 + output_padding[0]
    fw = (wd - 1) * strides[1] + (kw - 1) * dil[1] + 1 + output_padding[1]
    full = np.zeros((n, m, fh, fw))
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("nchw,cm->nmhw", x.astype(np.float64), w[:, :, i, j])
            full[:, :, i * dil[0]:i * dil[0] + strides[0] * (h - 1) + 1:strides[0],
                 j * dil[1]:j * dil[1] + strides[1] * (wd - 1) + 1:strides[1]] += contrib
    out = full[:, :, pads[0]:fh - pads[2], pads[1]:fw - pads[3]]
    return out + (0 if b is None else b[None, :, None, None])


def pool2d(x, kind, k, strides, pads, ceil_mode=False, count_include_pad=False):
    n, c, h, wd = x.shape
    sizes = []
    for d, size in enumerate((h, wd)):
        span = size + pads[d] + pads[d + 2] - k[d]
        out = -(-span // strides[d]) + 1 if ceil_mode else span // strides[d] + 1
        if ceil_mode and (out - 1) * strides[d] >= size + pads[d]:
            out -= 1
        sizes.append(out)
    out = np.zeros((n, c, sizes[0], sizes[1]))
    for i in range(sizes[0]):
        for j in range(sizes[1]):
            r0, c0 = i * strides[0] - pads[0], j * strides[1] - pads[1]
            r1, c1 = r0 + k[0], c0 + k[1]
            window = x[:, :, max(r0, 0):min(r1, h), max(c0, 0):min(c1, wd)].astype(np.float64)
            if kind == "max":
                out[:, :, i, j] = window.max(axis=(2, 3))
            else:
                count = k[0] * k[1] if count_include_pad else window.shape[2] * window.shape[3]
                if count_include_pad:  # the padded area only, not the part past it that ceil_mode adds
                    count = (min(r1, h + pads[2]) - r0) * (min(c1, wd + pads[3]) - c0)
                out[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return out


def batch_norm(x, scale, bias, mean, var, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def bn_params(seed, c, prefix):
    r = rng(seed)
    return [const(prefix + "_scale", f32(r.uniform(0.5, 1.5, c))), const(prefix + "_bias", f32(r.uniform(-0.5, 0.5, c))),
            const(prefix + "_mean", f32(r.uniform(-0.5, 0.5, c))), const(prefix + "_var", f32(r.uniform(0.5, 2.0, c)))]


def bn_node(x, y, prefix, name, **attrs):
    return helper.make_node("BatchNormalization", [x] + [prefix + s for s in ("_scale", "_bias", "_mean", "_var")], [y],
                            name=name, **attrs)


def bn_apply(x, inits, prefix, eps=1e-5):
    p = {t.name: numpy_helper.to_array(t) for t in inits}
    return batch_norm(x, p[prefix + "_scale"], p[prefix + "_bias"], p[prefix + "_mean"], p[prefix + "_var"], eps)


# --- A small CNN: Conv + BN (folded), pools, depthwise SAME_UPPER conv, Gemm + BN (folded), Softmax ----
def cnn():
    r = rng(20)
    x = f32(r.uniform(-1, 1, (1, 3, 11, 11)))
    w1, b1 = f32(r.uniform(-0.5, 0.5, (6, 3, 3, 3))), f32(r.uniform(-0.2, 0.2, 6))
    w2 = f32(r.uniform(-0.5, 0.5, (6, 1, 3, 3)))
    w3, b3 = f32(r.uniform(-0.5, 0.5, (5, 6))), f32(r.uniform(-0.2, 0.2, 5))
    inits = [const("w1", w1), const("b1", b1), const("w2", w2), const("w3", w3), const("b3", b3)]
    inits += bn_params(21, 6, "bn1") + bn_params(22, 6, "bn2") + bn_params(23, 6, "bn3") + bn_params(24, 5, "bn4")
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], strides=[2, 2]),
        bn_node("c1", "n1", "bn1", "bn1", epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        bn_node("r1", "n2", "bn2", "bn2"),  # after a Relu: a per-channel multiply-add
        helper.make_node("MaxPool", ["n2"], ["p1"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="depthwise", group=6, auto_pad="SAME_UPPER",
                         dilations=[2, 2], kernel_shape=[3, 3]),
        bn_node("c2", "n3", "bn3", "bn3"),
        helper.make_node("AveragePool", ["n3"], ["p2"], name="avgpool", kernel_shape=[3, 3], strides=[1, 1],
                         pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("GlobalAveragePool", ["p2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["fc"], name="fc", transB=1, alpha=0.5, beta=2.0),
        bn_node("fc", "n4", "bn4", "bn4"),
        helper.make_node("Softmax", ["n4"], ["y"], name="softmax", axis=-1),
        helper.make_node("GlobalMaxPool", ["n3"], ["gm"], name="gmp"),
        helper.make_node("Flatten", ["gm"], ["z"], name="flatten_max"),
    ]
    model = make_model(nodes, [value_info("x", x)], [value_info("y", (1, 5)), value_info("z", (1, 6))], inits)
    c1 = bn_apply(conv2d(x, w1, b1, (1, 1, 1, 1), (2, 2)), inits, "bn1", 1e-3)
    n2 = bn_apply(np.maximum(c1, 0), inits, "bn2")
    p1 = pool2d(n2, "max", (2, 2), (2, 2), (0, 0, 0, 0), ceil_mode=True)
    # SAME_UPPER, stride 1, dilation 2, kernel 3: total padding 4, split 2 / 2
    n3 = bn_apply(conv2d(p1, w2, None, (2, 2, 2, 2), (1, 1), (2, 2), group=6), inits, "bn3")
    p2 = pool2d(n3, "avg", (3, 3), (1, 1), (1, 1, 1, 1), count_include_pad=True)
    fc = 0.5 * p2.mean(axis=(2, 3)) @ w3.T + 2.0 * b3
    y = softmax(bn_apply(fc, inits, "bn4"))
    z = n3.max(axis=(2, 3))
    save("cnn", model, [{"x": x}], [{"y": f32(y), "z": f32(z)}])


def bn_shared():
    """The conv's output has a second reader: its BN must not be folded into the weights."""
    r = rng(27)
    x = f32(r.uniform(-1, 1, (1, 2, 5, 5)))
    w = f32(r.uniform(-0.5, 0.5, (3, 2, 3, 3)))
    inits = [const("w", w)] + bn_params(28, 3, "bn")
    nodes = [helper.make_node("Conv", ["x", "w"], ["t"], name="conv", pads=[1, 1, 1, 1]),
             bn_node("t", "y1", "bn", "bn"),
             helper.make_node("Relu", ["t"], ["y2"], name="relu")]
    t = conv2d(x, w, None, (1, 1, 1, 1))
    outs = {"y1": bn_apply(t, inits, "bn"), "y2": np.maximum(t, 0)}
    model = make_model(nodes, [value_info("x", x)], [value_info(k, v) for k, v in outs.items()], inits)
    save("bn_shared", model, [{"x": x}], [{k: f32(v) for k, v in outs.items()}])


def conv_transpose():
    r = rng(25)
    x = f32(r.uniform(-1, 1, (1, 4, 5, 5)))
    w, b = f32(r.uniform(-0.5, 0.5, (4, 3, 3, 3))), f32(r.uniform(-0.2, 0.2, 3))
    inits = [const("w", w), const("b", b)] + bn_params(26, 3, "bn")
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["t1"], name="up_output_shape", strides=[2, 2],
                         output_shape=[10, 10]),
        bn_node("t1", "y1", "bn", "bn"),
        helper.make_node("ConvTranspose", ["x", "w"], ["y2"], name="up_pads", strides=[2, 2], pads=[1, 0, 1, 1],
                         output_padding=[1, 1]),
        helper.make_node("ConvTranspose", ["x", "w"], ["y3"], name="up_same", strides=[2, 2], auto_pad="SAME_UPPER"),
    ]
    model = make_model(nodes, [value_info("x", x)],
                       [value_info("y1", (1, 3, 10, 10)), value_info("y2", (1, 3, 10, 11)), value_info("y3", (1, 3, 10, 10))],
                       inits)
    # output_shape 10: total padding = 2 * 4 + 0 + 3 - 10 = 1, NOTSET puts the odd one at the beginning
    y1 = bn_apply(conv_transpose2d(x, w, b, (1, 1, 0, 0), (2, 2)), inits, "bn")
    y2 = conv_transpose2d(x, w, None, (1, 0, 1, 1), (2, 2), output_padding=(1, 1))
    y3 = conv_transpose2d(x, w, None, (0, 0, 1, 1), (2, 2))  # SAME_UPPER: the odd one at the end
    save("conv_transpose", model, [{"x": x}], [{"y1": f32(y1), "y2": f32(y2), "y3": f32(y3)}])


def resize_nearest(x, out_shape, ctm="half_pixel", nearest="round_prefer_floor"):
    index = []
    for d, (n_in, n_out) in enumerate(zip(x.shape, out_shape)):
        scale = n_out / n_in
        o = np.arange(n_out, dtype=np.float64)
        if ctm == "asymmetric":
            src = o / scale
        elif ctm == "align_corners":
            src = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0 * o
        else:
            src = (o + 0.5) / scale - 0.5
        if nearest == "floor":
            i = np.floor(src)
        elif nearest == "ceil":
            i = np.ceil(src)
        elif nearest == "round_prefer_ceil":
            i = np.floor(src + 0.5)
        else:
            i = np.ceil(src - 0.5)
        index.append(np.clip(i, 0, n_in - 1).astype(np.int64))
    return x[np.ix_(*index)]


def resize_linear(x, out_shape, ctm):
    out = x.astype(np.float64)
    for d in (x.ndim - 2, x.ndim - 1):
        n_in, n_out = x.shape[d], out_shape[d]
        o = np.arange(n_out, dtype=np.float64)
        if ctm == "align_corners":
            src = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0 * o
        elif ctm == "asymmetric":
            src = o * n_in / n_out
        elif ctm == "pytorch_half_pixel" and n_out == 1:
            src = 0 * o
        else:
            src = (o + 0.5) * n_in / n_out - 0.5
        src = np.clip(src, 0, n_in - 1)
        lo = np.floor(src).astype(np.int64)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = src - lo
        shape = [1] * x.ndim
        shape[d] = n_out
        out = np.take(out, lo, axis=d) * (1 - frac).reshape(shape) + np.take(out, hi, axis=d) * frac.reshape(shape)
    return out


def depth_to_space(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


# --- Layout and tensor ops at opset 13 -------------------------------------------------------------------
def layout_ops():
    r = rng(30)
    x = f32(r.uniform(-1, 1, (1, 8, 3, 4)))
    i64 = lambda v: np.asarray(v, dtype=np.int64)
    extra = f32(r.uniform(-1, 1, (1, 2, 3, 4)))
    inits = [const("extra", extra), const("idx", i64([[0, -1], [3, 2]])), const("idx_scalar", i64(-2)), const("idx_one", i64([2])), const("pads_reflect", i64([0, 0, 1, 2, 0, 0, 2, 1])),
             const("pads_const", i64([0, 1, 0, 1, 0, 0, 1, 0])), const("pad_value", f32(-3.0)),
             const("pads_crop", i64([0, 0, -1, 1, 0, 0, 0, -1])),
             const("empty", f32(np.zeros(0))), const("scales", f32([1, 1, 2, 2])), const("sizes", i64([1, 8, 5, 7])),
             const("repeats", i64([1, 1, 2, 3])), const("expand_to", i64([2, 1, 3, 4])), const("sum_axes", i64([1, 3]))]
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 3, 1]),
        helper.make_node("Relu", ["t"], ["y_transpose"], name="relu_t"),
        helper.make_node("Concat", ["x", "extra"], ["y_concat"], name="concat", axis=1),
        helper.make_node("Gather", ["x", "idx"], ["y_gather"], name="gather", axis=1),
        # One constant index: a view (Slice, and Squeeze for a scalar), here of a transposed view.
        helper.make_node("Gather", ["t", "idx_scalar"], ["y_gather_scalar"], name="gather_scalar", axis=1),
        helper.make_node("Gather", ["x", "idx_one"], ["y_gather_one"], name="gather_one", axis=2),
        helper.make_node("Pad", ["x", "pads_reflect"], ["y_pad_reflect"], name="pad_reflect", mode="reflect"),
        helper.make_node("Pad", ["x", "pads_const", "pad_value"], ["y_pad_const"], name="pad_const"),
        helper.make_node("Pad", ["x", "pads_reflect"], ["y_pad_edge"], name="pad_edge", mode="edge"),
        helper.make_node("Pad", ["x", "pads_crop"], ["y_pad_crop"], name="pad_crop"),
        helper.make_node("Resize", ["x", "empty", "scales"], ["y_resize_nearest"], name="resize_nearest", mode="nearest"),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["y_resize_linear"], name="resize_linear", mode="linear",
                         coordinate_transformation_mode="align_corners"),
        helper.make_node("Resize", ["x", "empty", "scales"], ["y_resize_pytorch"], name="resize_pytorch", mode="linear",
                         coordinate_transformation_mode="pytorch_half_pixel"),
        helper.make_node("DepthToSpace", ["x"], ["y_d2s_dcr"], name="d2s_dcr", blocksize=2),
        helper.make_node("DepthToSpace", ["x"], ["y_d2s_crd"], name="d2s_crd", blocksize=2, mode="CRD"),
        helper.make_node("Tile", ["x", "repeats"], ["y_tile"], name="tile"),
        helper.make_node("Expand", ["x", "expand_to"], ["y_expand"], name="expand"),
        helper.make_node("ArgMax", ["x"], ["y_argmax"], name="argmax", axis=1, keepdims=0),
        helper.make_node("ReduceSum", ["x", "sum_axes"], ["y_reduce_sum"], name="reduce_sum", keepdims=1),
        helper.make_node("ReduceMean", ["x"], ["y_reduce_mean"], name="reduce_mean", axes=[2, 3], keepdims=0),
        helper.make_node("ReduceMax", ["x"], ["y_reduce_max"], name="reduce_max", axes=[1], keepdims=1),
        helper.make_node("Softmax", ["x"], ["y_softmax"], name="softmax", axis=1),
        helper.make_node("LogSoftmax", ["x"], ["y_log_softmax"], name="log_softmax"),
    ]
    outs = {
        "y_transpose": np.maximum(x.transpose(0, 2, 3, 1), 0),
        "y_concat": np.concatenate([x, extra], axis=1),
        "y_gather": np.take(x, np.asarray([[0, 7], [3, 2]]), axis=1),
        "y_gather_scalar": x.transpose(0, 2, 3, 1)[:, -2],
        "y_gather_one": x[:, :, 2:3],
        "y_pad_reflect": np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="reflect"),
        "y_pad_const": np.pad(x, ((0, 0), (1, 0), (0, 1), (1, 0)), constant_values=-3.0),
        "y_pad_edge": np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="edge"),
        "y_pad_crop": np.pad(x[:, :, 1:, :-1], ((0, 0), (0, 0), (0, 0), (1, 0))),
        "y_resize_nearest": resize_nearest(x, (1, 8, 6, 8)),
        "y_resize_linear": resize_linear(x, (1, 8, 5, 7), "align_corners"),
        "y_resize_pytorch": resize_linear(x, (1, 8, 6, 8), "pytorch_half_pixel"),
        "y_d2s_dcr": depth_to_space(x, 2, "DCR"),
        "y_d2s_crd": depth_to_space(x, 2, "CRD"),
        "y_tile": np.tile(x, (1, 1, 2, 3)),
        "y_expand": np.broadcast_to(x, (2, 8, 3, 4)),
        "y_argmax": np.argmax(x, axis=1).astype(np.int64),
        "y_reduce_sum": x.sum(axis=(1, 3), keepdims=True),
        "y_reduce_mean": x.mean(axis=(2, 3)),
        "y_reduce_max": x.max(axis=1, keepdims=True),
        "y_softmax": softmax(x, axis=1),
        "y_log_softmax": np.log(softmax(x, axis=-1)),
    }
    outs = {n: (a if a.dtype == np.int64 else f32(a)) for n, a in outs.items()}
    model = make_model(nodes, [value_info("x", x)], [value_info(n, a, elem_of(a)) for n, a in outs.items()], inits)
    save("layout_ops", model, [{"x": x}], [outs])


# --- Opset 11 forms: Softmax coerced to 2-D, Reduce axes attributes, Upsample-free Resize scales ----------
def long_concats():
    """Concats of more inputs than vkfuse's Concat takes (16), as densenet's dense blocks have them: layer k
    concatenates f0 .. fk, and one Concat takes 40 inputs (f0 .. f19 twice)."""
    r = rng(40)
    x = f32(r.uniform(-1, 1, (1, 1, 2, 3)))
    scales = [f32(r.uniform(0.5, 2.0, (1, 1, 1, 1))) for _ in range(20)]
    nodes, feats = [], []
    for i in range(20):
        nodes.append(helper.make_node("Mul", ["x", f"s{i}"], [f"f{i}"], name=f"feature{i}"))
        feats.append(x * scales[i])
    outputs, expected = [], {}
    for k in range(1, 20):
        nodes.append(helper.make_node("Concat", [f"f{i}" for i in range(k + 1)], [f"layer{k}"], name=f"concat{k}", axis=1))
        nodes.append(helper.make_node("Relu", [f"layer{k}"], [f"y{k}"], name=f"relu{k}"))
        outputs.append(value_info(f"y{k}", (1, k + 1, 2, 3)))
        expected[f"y{k}"] = np.maximum(np.concatenate(feats[:k + 1], axis=1), 0)
    twice = [f"f{i}" for i in range(20)] * 2
    nodes.append(helper.make_node("Concat", twice, ["y_twice"], name="concat_twice", axis=-3))
    outputs.append(value_info("y_twice", (1, 40, 2, 3)))
    expected["y_twice"] = np.concatenate(feats * 2, axis=1)
    inits = [const(f"s{i}", scales[i]) for i in range(20)]
    save("long_concats", make_model(nodes, [value_info("x", x)], outputs, inits), [{"x": x}], [expected])


def ops_opset11():
    r = rng(31)
    x = f32(r.uniform(-2, 2, (2, 3, 4)))
    nodes = [
        helper.make_node("Softmax", ["x"], ["y_softmax"], name="softmax", axis=1),  # over 3 * 4 values per row
        helper.make_node("LogSoftmax", ["x"], ["y_log_softmax"], name="log_softmax"),  # default axis 1
        helper.make_node("ReduceSum", ["x"], ["y_sum"], name="sum", axes=[-1], keepdims=0),
        helper.make_node("ReduceMean", ["x"], ["y_mean"], name="mean", axes=[1]),
        helper.make_node("Clip", ["x"], ["c"], name="clip_inputs_omitted"),
        helper.make_node("Unsqueeze", ["c"], ["y_clip"], name="unsqueeze", axes=[-1]),
        # Upsample is deprecated since opset 10 but still exported by old tools: scales as an input
        helper.make_node("Upsample", ["x", "up_scales"], ["y_upsample"], name="upsample", mode="nearest"),
    ]
    flat = x.reshape(2, 12)
    outs = {"y_softmax": softmax(flat).reshape(2, 3, 4), "y_log_softmax": np.log(softmax(flat)).reshape(2, 3, 4),
            "y_sum": x.sum(axis=-1), "y_mean": x.mean(axis=1, keepdims=True), "y_clip": x[..., None],
            "y_upsample": resize_nearest(x, (2, 3, 8), "asymmetric", "floor")}
    model = make_model(nodes, [value_info("x", x)], [value_info(n, a) for n, a in outs.items()],
                       [const("up_scales", f32([1, 1, 2]))], opset=11)
    save("ops_opset11", model, [{"x": x}], [{n: f32(a) for n, a in outs.items()}], check=False)


# --- Opset 18+ forms: Reduce axes inputs, Pad axes, Resize axes; Gelu (opset 20) ---------------------------
def ops_opset20():
    r = rng(32)
    x = f32(r.uniform(-2, 2, (2, 3, 4)))
    i64 = lambda v: np.asarray(v, dtype=np.int64)
    inits = [const("axes1", i64([1])), const("pads", i64([1, 2])), const("pad_axes", i64([-1])),
             const("sizes", i64([8])), const("size_axes", i64([2])), const("gamma", f32(r.uniform(0.5, 1.5, 4))),
             const("beta", f32(r.uniform(-0.5, 0.5, 4)))]
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes1"], ["y_mean"], name="mean", keepdims=1),
        helper.make_node("ReduceMax", ["x"], ["y_max_all"], name="max_all", keepdims=0),
        helper.make_node("Pad", ["x", "pads", "", "pad_axes"], ["y_pad"], name="pad"),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["y_resize"], name="resize", axes=[2], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Gelu", ["x"], ["y_gelu_tanh"], name="gelu_tanh", approximate="tanh"),
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y_layer_norm"], name="layer_norm", epsilon=1e-5),
        helper.make_node("Cast", ["x"], ["xi"], name="to_int64", to=TensorProto.INT64),
        helper.make_node("CastLike", ["xi", "x"], ["y_cast"], name="back_to_float"),
    ]
    mu = x.mean(axis=-1, keepdims=True)
    ln = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    outs = {"y_mean": x.mean(axis=1, keepdims=True), "y_max_all": np.asarray(x.max()),
            "y_pad": np.pad(x, ((0, 0), (0, 0), (1, 2))),
            "y_resize": resize_nearest(x, (2, 3, 8), "asymmetric", "floor"),
            "y_gelu_tanh": 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
            "y_layer_norm": ln * numpy_helper.to_array(inits[5]) + numpy_helper.to_array(inits[6]),
            "y_cast": x.astype(np.int64).astype(np.float32)}
    model = make_model(nodes, [value_info("x", x)], [value_info(n, a) for n, a in outs.items()], inits, opset=20)
    save("ops_opset20", model, [{"x": x}], [{n: f32(a) for n, a in outs.items()}], check=False)


# --- TensorProto files of every storage form (tensor_proto.cpp) -------------------------------------
def tensor_files():
    folder = os.path.join(ROOT, "tensors")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)

    def write(name, tensor):
        with open(os.path.join(folder, name + ".pb"), "wb") as f:
            f.write(tensor.SerializeToString())

    write("float_raw", numpy_helper.from_array(f32([[1.5, -2], [0.25, 3]]), "float_raw"))
    write("float_typed", helper.make_tensor("float_typed", TensorProto.FLOAT, [3], [1.5, -2, 0.25]))
    write("double_typed", helper.make_tensor("double_typed", TensorProto.DOUBLE, [2], [0.1, -1e3]))
    write("float16_raw", numpy_helper.from_array(np.asarray([1.0, -0.5, 65504], np.float16), "float16_raw"))
    f16 = helper.make_tensor("float16_typed", TensorProto.FLOAT16, [2], [0, 0])
    del f16.int32_data[:]
    f16.int32_data.extend([0x3C00, 0xC000])  # 1.0, -2.0 as bit patterns
    write("float16_typed", f16)
    write("int64_raw", numpy_helper.from_array(np.asarray([3, -4, 2147483647], np.int64), "int64_raw"))
    write("int64_typed", helper.make_tensor("int64_typed", TensorProto.INT64, [2], [7, -8]))
    write("int64_too_big", numpy_helper.from_array(np.asarray([1, 1 << 40], np.int64), "int64_too_big"))
    write("int8_raw", numpy_helper.from_array(np.asarray([-128, 127], np.int8), "int8_raw"))
    write("uint8_typed", helper.make_tensor("uint8_typed", TensorProto.UINT8, [3], [0, 200, 255]))
    write("int16_raw", numpy_helper.from_array(np.asarray([-300, 300], np.int16), "int16_raw"))
    write("int32_typed", helper.make_tensor("int32_typed", TensorProto.INT32, [2, 1], [-5, 6]))
    write("bool_raw", numpy_helper.from_array(np.asarray([True, False, True]), "bool_raw"))
    write("bool_typed", helper.make_tensor("bool_typed", TensorProto.BOOL, [2], [0, 1]))
    write("scalar", numpy_helper.from_array(f32(4.5), "scalar"))
    write("string", helper.make_tensor("string", TensorProto.STRING, [1], [b"text"]))
    wrong = helper.make_tensor("typed_count_mismatch", TensorProto.FLOAT, [3], [1, 2, 3])
    del wrong.float_data[-1]
    write("typed_count_mismatch", wrong)
    negative = empty_tensor("negative_dims", TensorProto.FLOAT, [2, -1])
    write("negative_dims", negative)
    with open(os.path.join(folder, "external_data.bin"), "wb") as f:
        f.write(f32([9, 8, 7, 6]).tobytes())
    ext = empty_tensor("external", TensorProto.FLOAT, [2])
    ext.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "external_data.bin"), ("offset", "8"), ("length", "8")):
        e = ext.external_data.add()
        e.key, e.value = k, v
    write("external", ext)


if __name__ == "__main__":
    os.makedirs(ROOT, exist_ok=True)
    for make in (elementwise_chain, nan_inf, fold_ops, shape_chain, slice_split, split_opset11, split_opset18, matmul_add,
                 external_data, bad_models, node_names, tensor_files, cnn, bn_shared, conv_transpose, layout_ops, long_concats, ops_opset11,
                 ops_opset20):
        make()
