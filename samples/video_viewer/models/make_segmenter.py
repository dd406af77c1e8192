"""Writes segmenter.onnx, the viewer tests' segmentation model: a 1x1 Conv that scores four classes
per pixel from its (ImageNet-normalized) colour, so the class of every pixel is known in closed form:

    class 0  background: a constant score
    class 1..3  red, green, blue: how much that channel exceeds the other two

    python3 make_segmenter.py [-o segmenter.onnx]

Input "image" float32 [1, 3, height, width] (symbolic), output "classes" [1, 4, height, width].
WEIGHTS and BIAS are imported by tests/check_screenshot.py, which computes the expected classes.
"""
import argparse
import os

import numpy as np

WEIGHTS = np.array([[0.0, 0.0, 0.0],
                    [2.0, -1.0, -1.0],
                    [-1.0, 2.0, -1.0],
                    [-1.0, -1.0, 2.0]], dtype=np.float32)
BIAS = np.array([1.5, 0.0, 0.0, 0.0], dtype=np.float32)


def build_model():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(WEIGHTS.reshape(4, 3, 1, 1), "w")
    b = numpy_helper.from_array(BIAS, "b")
    node = helper.make_node("Conv", ["image", "w", "b"], ["classes"], name="classify")
    graph = helper.make_graph(
        [node], "segmenter",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "height", "width"])],
        [helper.make_tensor_value_info("classes", TensorProto.FLOAT, [1, 4, "height", "width"])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="vkfuse make_segmenter.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "segmenter.onnx"))
    args = parser.parse_args()
    import onnx
    onnx.save(build_model(), args.out)
    print(f"wrote {args.out}")
