"""vkfuse: ONNX models on any Vulkan GPU, made fast by operator fusion.

    import numpy as np, vkfuse
    session = vkfuse.InferenceSession("model.onnx", precision="fp32")
    x = session.get_inputs()[0]
    (y,) = session.run(None, {x.name: np.zeros(x.shape, np.float32)})
    print(session.plan, session.last_gpu_ms)

Errors raise vkfuse.Error (a RuntimeError) with vkfuse's message and .code.
"""
from ._vkfuse import Error, InferenceSession, NodeArg, __version__, get_devices, inspect

__all__ = ["Error", "InferenceSession", "NodeArg", "__version__", "get_devices", "inspect"]
