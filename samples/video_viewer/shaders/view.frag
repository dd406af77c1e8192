#version 450
// The frame and the model's output as the view mode shows them, letterboxed to keep their aspect.
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
layout(set = 0, binding = 0) uniform sampler2D frame_image;
layout(set = 0, binding = 1) uniform sampler2D output_image;
layout(push_constant) uniform View {
  vec2 scale;     // target uv -> content uv about the centre (letterbox)
  int mode;       // 0 side by side, 1 split, 2 output only, 3 overlay, 4 frame only
  float split;    // mode 1: where the output starts, 0..1
  float opacity;  // mode 3: the overlay's weight
} view;

void main() {
  vec2 p = (uv - 0.5) * view.scale + 0.5;
  if (any(lessThan(p, vec2(0.0))) || any(greaterThan(p, vec2(1.0)))) {
    color = vec4(0.0, 0.0, 0.0, 1.0);
    return;
  }
  vec4 c;
  if (view.mode == 0) {
    c = p.x < 0.5 ? texture(frame_image, vec2(p.x * 2.0, p.y)) : texture(output_image, vec2(p.x * 2.0 - 1.0, p.y));
  } else if (view.mode == 1) {
    c = p.x < view.split ? texture(frame_image, p) : texture(output_image, p);
    if (abs(p.x - view.split) < 0.002) c = vec4(1.0);
  } else if (view.mode == 2) {
    c = texture(output_image, p);
  } else if (view.mode == 3) {
    vec4 o = texture(output_image, p);
    c = mix(texture(frame_image, p), vec4(o.rgb, 1.0), view.opacity * o.a);
  } else {
    c = texture(frame_image, p);
  }
  color = vec4(c.rgb, 1.0);
}
