// PNG files for the viewer: screenshots (write_png) and reading them back for tests and the compare tool
// (read_png), through FFmpeg's PNG encoder and decoder.
//
// Contract: pixels are tightly packed RGBA8, width * 4 bytes a row, row 0 at the top. The caller owns
// every buffer; nothing is kept between calls. A PNG written by write_png reads back byte-exact
// (alpha included). Both return false on failure with *error set to one line naming the file and the
// problem. Both are safe to call from any thread (each call uses its own FFmpeg state).
//
// Link: pkg-config modules libavcodec libswscale libavutil.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace viewer {

// Encodes width x height RGBA8 pixels as a PNG at path, replacing any file there.
bool write_png(const std::string& path, int width, int height, const uint8_t* rgba, std::string* error);

// Decodes the PNG at path to RGBA8 (any PNG colour type; alpha 255 where the file has none).
bool read_png(const std::string& path, int* width, int* height, std::vector<uint8_t>* rgba, std::string* error);

}  // namespace viewer
