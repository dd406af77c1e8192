"""`vkfuse plan --dot` keeps every edge: each tensor it draws, other than a graph input or a constant,
has an edge from what produces it (a group's op, a view, or the tensor it was stored into or read from).
Usage: check_dot_edges.py VKFUSE MODEL.onnx OUT.dot"""
import re
import subprocess
import sys

vkfuse, model, out = sys.argv[1:4]
subprocess.run([vkfuse, "plan", model, "--dot", out], check=True, stdout=subprocess.DEVNULL)
text = open(out).read()
declared = dict(re.findall(r"^  (v\d+) \[([^\n]*)\];$", text, re.M))
targets = set(re.findall(r"-> (v\d+)[ ;]", text))
missing = [v for v, style in declared.items() if "cfe2ff" not in style and "shape=note" not in style and v not in targets]
print(f"{model}: {len(declared)} tensors drawn, {len(missing)} without an edge from their producer {missing[:10]}")
sys.exit(1 if missing or not declared else 0)
