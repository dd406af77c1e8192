// PNG encode/decode through libavcodec, so the viewer needs no image library beyond FFmpeg.
#include "image_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include "ffmpeg_handles.h"

namespace viewer {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::string errno_hint(int err) {
  if (err == ENOENT) return " (does the folder exist?)";
  if (err == EACCES || err == EPERM || err == EROFS) return " (pick a folder you can write to)";
  if (err == ENOSPC) return " (the disk is full)";
  return "";
}

}  // namespace

bool write_png(const std::string& path, int width, int height, const uint8_t* rgba, std::string* error) {
  if (!rgba) return fail(error, "cannot write " + path + ": no pixels given");
  if (width <= 0 || height <= 0 ||
      av_image_check_size(static_cast<unsigned>(width), static_cast<unsigned>(height), 0, nullptr) < 0)
    return fail(error, "cannot write " + path + ": invalid image size " + std::to_string(width) + "x" +
                           std::to_string(height));
  const AVCodec* encoder = avcodec_find_encoder(AV_CODEC_ID_PNG);
  if (!encoder) return fail(error, "cannot write " + path + ": this FFmpeg build has no PNG encoder");
  CodecPtr codec(avcodec_alloc_context3(encoder));
  FramePtr frame(av_frame_alloc());
  PacketPtr packet(av_packet_alloc());
  if (!codec || !frame || !packet) return fail(error, "cannot write " + path + ": out of memory");
  codec->width = width;
  codec->height = height;
  codec->pix_fmt = AV_PIX_FMT_RGBA;
  codec->time_base = AVRational{1, 1};
  codec->thread_count = 1;  // one picture: worker threads would only add start-up cost
  int r = avcodec_open2(codec.get(), encoder, nullptr);
  if (r < 0) return fail(error, "cannot write " + path + ": the PNG encoder did not start (" + av_error_text(r) + ")");

  // The encoder reads rows with SIMD and expects FFmpeg's padded, aligned buffers, not the caller's.
  frame->format = AV_PIX_FMT_RGBA;
  frame->width = width;
  frame->height = height;
  r = av_frame_get_buffer(frame.get(), 0);
  if (r < 0) return fail(error, "cannot write " + path + ": " + av_error_text(r));
  av_image_copy_plane(frame->data[0], frame->linesize[0], rgba, width * 4, width * 4, height);

  r = avcodec_send_frame(codec.get(), frame.get());
  if (r >= 0) r = avcodec_send_frame(codec.get(), nullptr);
  if (r < 0) return fail(error, "cannot write " + path + ": PNG encoding failed (" + av_error_text(r) + ")");
  std::vector<uint8_t> png;
  while ((r = avcodec_receive_packet(codec.get(), packet.get())) >= 0) {
    png.insert(png.end(), packet->data, packet->data + packet->size);
    av_packet_unref(packet.get());
  }
  if (r != AVERROR_EOF || png.empty())
    return fail(error, "cannot write " + path + ": PNG encoding failed (" + av_error_text(r) + ")");

  // Encode first, open second: a failed encode must not leave an empty file behind.
  FilePtr file(std::fopen(path.c_str(), "wb"));
  if (!file) {
    const int err = errno;
    return fail(error, "cannot write " + path + ": " + std::strerror(err) + errno_hint(err));
  }
  const bool written = std::fwrite(png.data(), 1, png.size(), file.get()) == png.size();
  int err = written ? 0 : errno;
  if (std::fclose(file.release()) != 0 && !err) err = errno ? errno : EIO;
  if (!written || err) {
    // A truncated PNG would later fail to read for a less obvious reason; never unlink a device or pipe.
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) std::remove(path.c_str());
    return fail(error, "cannot write " + path + ": " + std::strerror(err ? err : EIO) + errno_hint(err));
  }
  return true;
}

bool read_png(const std::string& path, int* width, int* height, std::vector<uint8_t>* rgba, std::string* error) {
  if (!width || !height || !rgba) return fail(error, "cannot read " + path + ": no output given");
  std::vector<uint8_t> bytes;
  {
    FilePtr file(std::fopen(path.c_str(), "rb"));
    if (!file) return fail(error, "cannot read " + path + ": " + std::strerror(errno));
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
    if (std::ferror(file.get())) return fail(error, "cannot read " + path + ": " + std::strerror(errno));
  }
  if (bytes.size() < sizeof kPngSignature || std::memcmp(bytes.data(), kPngSignature, sizeof kPngSignature) != 0)
    return fail(error, path + " is not a PNG file");

  const AVCodec* decoder = avcodec_find_decoder(AV_CODEC_ID_PNG);
  if (!decoder) return fail(error, "cannot read " + path + ": this FFmpeg build has no PNG decoder");
  CodecPtr codec(avcodec_alloc_context3(decoder));
  FramePtr frame(av_frame_alloc());
  PacketPtr packet(av_packet_alloc());
  if (!codec || !frame || !packet) return fail(error, "cannot read " + path + ": out of memory");
  codec->thread_count = 1;
  int r = avcodec_open2(codec.get(), decoder, nullptr);
  if (r < 0) return fail(error, "cannot read " + path + ": the PNG decoder did not start (" + av_error_text(r) + ")");
  // av_new_packet adds the zeroed padding the decoder's bitstream readers may over-read into.
  if (bytes.size() > static_cast<size_t>(INT32_MAX - AV_INPUT_BUFFER_PADDING_SIZE))
    return fail(error, "cannot read " + path + ": file too large");
  r = av_new_packet(packet.get(), static_cast<int>(bytes.size()));
  if (r < 0) return fail(error, "cannot read " + path + ": " + av_error_text(r));
  std::memcpy(packet->data, bytes.data(), bytes.size());
  r = avcodec_send_packet(codec.get(), packet.get());
  if (r >= 0) r = avcodec_send_packet(codec.get(), nullptr);
  if (r >= 0) r = avcodec_receive_frame(codec.get(), frame.get());
  if (r < 0) return fail(error, "cannot read " + path + ": not a valid PNG (" + av_error_text(r) + ")");

  const int w = frame->width;
  const int h = frame->height;
  rgba->resize(static_cast<size_t>(w) * h * 4);
  if (frame->format == AV_PIX_FMT_RGBA) {
    av_image_copy_plane(rgba->data(), w * 4, frame->data[0], frame->linesize[0], w * 4, h);
  } else {
    // Grey, palette, RGB and 16-bit PNGs; same size, so point sampling is exact where exact is possible.
    SwsPtr sws(sws_getContext(w, h, static_cast<AVPixelFormat>(frame->format), w, h, AV_PIX_FMT_RGBA, SWS_POINT,
                              nullptr, nullptr, nullptr));
    if (!sws) {
      const char* name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame->format));
      return fail(error, "cannot read " + path + ": cannot convert " + (name ? name : "its pixel format") + " to RGBA");
    }
    uint8_t* dst[4] = {rgba->data(), nullptr, nullptr, nullptr};
    const int dst_stride[4] = {w * 4, 0, 0, 0};
    if (sws_scale(sws.get(), frame->data, frame->linesize, 0, h, dst, dst_stride) <= 0)
      return fail(error, "cannot read " + path + ": converting to RGBA failed");
  }
  *width = w;
  *height = h;
  return true;
}

}  // namespace viewer
