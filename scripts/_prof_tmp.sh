M=/tmp/vkfuse-ab-work/models; export PATH=$PWD/.device/bin:$PATH
for m in shufflenet_v2_x1_0 mobilenet_v2 squeezenet1_1; do
  for v in a b; do echo "== $m $v"; VKFUSE_CACHE_DIR=/tmp/vkfuse-ab-work/cache-$v bash .device/run.sh vkfuse_$v bench $M/$m/model.onnx --top 300 2>&1 | grep " ms  \["; done
  rm -rf /tmp/d; VKFUSE_CACHE_DIR=/tmp/nocache VKFUSE_DUMP_DIR=/tmp/d bash .device/run.sh vkfuse_b run $M/$m/model.onnx --input $M/$m/input.npy >/dev/null 2>&1
  echo "== $m dump"
  for f in /tmp/d/*Conv*.comp; do grep -q "define VKF_POINTWISE 1" $f || continue; echo "$(basename $f) $(grep -h '^#define VKF_\(C\|H\|M\|BM\|BN\|BK\|TM\|TN\|WORKGROUP_SIZE\|SPLIT_GROUPS\|B_FEW_LOADERS\|IN0_COMPUTED\) ' $f | awk '{print $2"="$3}' | tr '\n' ' ')"; done
  echo "== $m plan"; bash .device/run.sh vkfuse_b plan $M/$m/model.onnx 2>&1 | grep -E "^  \[|in: |out: "
done
