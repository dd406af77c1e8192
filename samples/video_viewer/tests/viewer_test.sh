#!/usr/bin/env bash
# The viewer end to end on a clip made here with FFmpeg's test source:
#   viewer_test.sh VIEWER PYTHON WORK_DIR window|offscreen [cartoon|segmenter]
# 30 frames through the embedded cartoon model (or models/segmenter.onnx, shown as its palette), shown
# alone at the frame's size without the HUD; the last frame shown (--screenshot) is checked against
# numpy's model of the last decoded frame (--dump-frame) by check_screenshot.py. window: a real window
# and swapchain under Xvfb.
set -euo pipefail
viewer=$1 python=$2 work=$3 mode=$4 model=${5:-cartoon}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
ffmpeg -v error -f lavfi -i testsrc2=size=320x240:rate=30 -t 1 -pix_fmt yuv420p "$work/clip.mp4"
args=(--input "$work/clip.mp4" --frames 30 --view output --no-hud --size 320x240 --no-pace
      --screenshot "$work/shot.png" --dump-frame "$work/frame.png" --json)
[ "$model" = cartoon ] || args+=(--model "$here/../models/$model.onnx")
if [ "$mode" = window ]; then
  xvfb-run -a -s "-screen 0 640x480x24" "$viewer" "${args[@]}" > "$work/summary.json"
else
  "$viewer" "${args[@]}" --offscreen > "$work/summary.json"
fi
cat "$work/summary.json"
"$python" "$here/check_screenshot.py" "$work/shot.png" "$work/frame.png" --model "$model"
