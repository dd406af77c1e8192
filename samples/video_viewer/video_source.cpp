// VideoSource: FFmpeg demux + decode + swscale to RGBA8 for files, V4L2 cameras and testsrc.
#include "video_source.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include "ffmpeg_handles.h"
#include "pattern.h"

namespace viewer {
namespace {


using Clock = std::chrono::steady_clock;

// A stream that goes this long without yielding a frame is broken, not glitched. Generous enough for
// decoder delay (frame threads, B-frames) and for damage that lasts until the next keyframe.
constexpr int kMaxPacketsWithoutFrame = 512;
constexpr int kDefaultTestWidth = 1280;
constexpr int kDefaultTestHeight = 720;
constexpr int kMaxTestSize = 16384;  // the common Vulkan maxImageDimension2D
constexpr double kDefaultFps = 30.0;

constexpr const char* kListCameras = "`v4l2-ctl --list-devices` lists cameras";

enum class Kind { kFile, kCamera, kLavfi, kPattern };

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool fail(std::string* error, std::string message) {
  *error = std::move(message);
  return false;
}

void init_ffmpeg() {
  static std::once_flag once;
  std::call_once(once, [] {
    avdevice_register_all();
    av_log_set_level(AV_LOG_ERROR);
  });
}

bool is_full_range_format(int format) {
  switch (format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUVJ411P:
      return true;
    default:
      return false;
  }
}


}  // namespace

struct VideoSource::Impl {
  std::string input;
  Kind kind = Kind::kFile;
  std::string codec_name;
  int width = 0;
  int height = 0;
  double fps = kDefaultFps;

  FormatPtr format;
  CodecPtr codec;
  FramePtr decoded;
  PacketPtr packet;
  int stream_index = -1;

  SwsPtr sws;
  int sws_width = 0, sws_height = 0, sws_format = -1, sws_colorspace = -1;
  bool sws_full_range = false;

  bool pending = false;  // open() decoded the first frame; the first read() hands it out
  double pending_ms = 0.0;
  bool draining = false;
  int64_t frames_this_pass = 0;
  int64_t frames_decoded = 0;
  int packets_since_frame = 0;
  std::string last_error;
  int64_t next_index = 0;
  std::string broken;  // set once read() fails; later reads repeat it

  bool open_file(std::string* error);
  bool open_camera(int width_hint, int height_hint, std::string* error);
  bool open_testsrc(int width_hint, int height_hint, std::string* error);
  bool start_decoder(std::string* error);
  bool prime(std::string* error);
  bool decode_next(std::string* error);
  bool end_of_stream(std::string* error);
  bool rewind(std::string* error);
  bool convert(Frame& frame, std::string* error);
  bool read(Frame& frame, std::string* error);
  std::string last_error_suffix() const { return last_error.empty() ? "" : " (last error: " + last_error + ")"; }
};

bool VideoSource::Impl::open_file(std::string* error) {
  kind = Kind::kFile;
  AVFormatContext* raw = nullptr;
  const int r = avformat_open_input(&raw, input.c_str(), nullptr, nullptr);
  if (r < 0) {
    if (r == AVERROR(EACCES) || r == AVERROR(EPERM))
      return fail(error, "permission denied reading " + input + " (check its permissions: ls -l " + input + ")");
    if (r == AVERROR(ENOENT)) return fail(error, "no such file: " + input + " (check the path)");
    return fail(error, "cannot decode " + input + ": not a video format FFmpeg can read (" + av_error_text(r) + ")");
  }
  format.reset(raw);
  const int info = avformat_find_stream_info(format.get(), nullptr);
  if (info < 0)
    return fail(error, "cannot decode " + input + ": FFmpeg could not read its streams (" + av_error_text(info) + ")");
  return start_decoder(error) && prime(error);
}

bool VideoSource::Impl::open_camera(int width_hint, int height_hint, std::string* error) {
  kind = Kind::kCamera;
  const auto* v4l2 = av_find_input_format("video4linux2");
  if (!v4l2)
    return fail(error, "cannot open camera " + input +
                           ": this FFmpeg's libavdevice has no video4linux2 input (install one built with V4L2)");
  const bool sized = width_hint > 0 && height_hint > 0;
  auto try_open = [&](bool with_size) {
    AVDictionary* options = nullptr;
    if (with_size) {
      const std::string size = std::to_string(width_hint) + "x" + std::to_string(height_hint);
      av_dict_set(&options, "video_size", size.c_str(), 0);
    }
    AVFormatContext* raw = nullptr;
    const int r = avformat_open_input(&raw, input.c_str(), v4l2, &options);
    av_dict_free(&options);
    if (r >= 0) format.reset(raw);
    return r;
  };
  int r = try_open(sized);
  const bool identity_error = r == AVERROR(ENOENT) || r == AVERROR(ENXIO) || r == AVERROR(EACCES) ||
                              r == AVERROR(EPERM) || r == AVERROR(EBUSY) || r == AVERROR(ENOTTY) ||
                              r == AVERROR(ENODEV);
  // A camera that rejects the requested size still works at its own default.
  if (r < 0 && sized && !identity_error) r = try_open(false);
  if (r < 0) {
    if (r == AVERROR(ENOENT) || r == AVERROR(ENXIO))
      return fail(error, "no camera at " + input + " (is it connected? " + kListCameras + ")");
    if (r == AVERROR(EACCES) || r == AVERROR(EPERM))
      return fail(error, "permission denied opening camera " + input +
                             " (add your user to the video group: sudo usermod -aG video $USER, then log in again)");
    if (r == AVERROR(EBUSY))
      return fail(error, "camera " + input + " is busy (another program is using it; close that and retry)");
    if (r == AVERROR(ENOTTY) || r == AVERROR(ENODEV))
      return fail(error, input + " is not a video capture device (" + kListCameras + "; pick a node listed there)");
    return fail(error, "cannot open camera " + input + ": " + av_error_text(r) + " (" + kListCameras + ")");
  }
  return start_decoder(error) && prime(error);
}

bool VideoSource::Impl::open_testsrc(int width_hint, int height_hint, std::string* error) {
  const bool sized = width_hint > 0 && height_hint > 0;
  width = sized ? width_hint : kDefaultTestWidth;
  height = sized ? height_hint : kDefaultTestHeight;
  if (width > kMaxTestSize || height > kMaxTestSize)
    return fail(error, "testsrc size " + std::to_string(width) + "x" + std::to_string(height) +
                           " is too large (pick a smaller width and height)");
  fps = kDefaultFps;
  if (const auto* lavfi = av_find_input_format("lavfi")) {
    // Asking the filter for RGBA makes the conversion a plain copy.
    const std::string graph = "testsrc2=size=" + std::to_string(width) + "x" + std::to_string(height) +
                              ":rate=" + std::to_string(static_cast<int>(kDefaultFps)) + ",format=rgba";
    AVFormatContext* raw = nullptr;
    if (avformat_open_input(&raw, graph.c_str(), lavfi, nullptr) >= 0) {
      kind = Kind::kLavfi;
      format.reset(raw);
      if (!start_decoder(error) || !prime(error)) return false;
      codec_name = "testsrc2";
      return true;
    }
  }
  // No lavfi (or no testsrc2 filter) in this FFmpeg build: draw the pattern here instead.
  kind = Kind::kPattern;
  codec_name = "generated pattern";
  return true;
}

bool VideoSource::Impl::start_decoder(std::string* error) {
  AVFormatContext* fmt = format.get();
  int best = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  // Cover art in an audio file is a one-picture "video" stream; showing it as video would be misleading.
  if (best >= 0 && (fmt->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
    best = -1;
    for (unsigned i = 0; i < fmt->nb_streams; ++i) {
      const AVStream* st = fmt->streams[i];
      if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(st->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        best = static_cast<int>(i);
        break;
      }
    }
  }
  if (best < 0) {
    std::string kinds;
    for (unsigned i = 0; i < fmt->nb_streams; ++i) {
      const AVStream* st = fmt->streams[i];
      const char* name = (st->disposition & AV_DISPOSITION_ATTACHED_PIC)
                             ? "cover art"
                             : av_get_media_type_string(st->codecpar->codec_type);
      if (!name) name = "unknown";
      if (kinds.find(name) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + std::string(name);
    }
    return fail(error, input + " has no video stream (" + (kinds.empty() ? "no streams at all" : "only " + kinds) +
                           "; pass a file with video)");
  }
  stream_index = best;
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (static_cast<int>(i) != best) fmt->streams[i]->discard = AVDISCARD_ALL;  // demuxers skip them

  AVStream* st = fmt->streams[best];
  const char* codec_id_name = avcodec_get_name(st->codecpar->codec_id);
  const auto* decoder = avcodec_find_decoder(st->codecpar->codec_id);
  if (!decoder)
    return fail(error, "cannot decode " + input + ": this FFmpeg build has no " + codec_id_name +
                           " decoder (install an FFmpeg that has one, or re-encode the file to h264)");
  codec.reset(avcodec_alloc_context3(decoder));
  decoded.reset(av_frame_alloc());
  packet.reset(av_packet_alloc());
  if (!codec || !decoded || !packet) return fail(error, "cannot decode " + input + ": out of memory");
  int r = avcodec_parameters_to_context(codec.get(), st->codecpar);
  if (r < 0)
    return fail(error, "cannot decode " + input + ": bad " + codec_id_name + " parameters (" + av_error_text(r) + ")");
  codec->thread_count = 0;
  codec->pkt_timebase = st->time_base;
  if (kind != Kind::kFile) {
    // Frame threads buffer one frame per thread; a live source wants each frame as soon as it arrives.
    codec->thread_type = FF_THREAD_SLICE;
    codec->flags |= AV_CODEC_FLAG_LOW_DELAY;
  }
  r = avcodec_open2(codec.get(), decoder, nullptr);
  if (r < 0)
    return fail(error, "cannot decode " + input + ": the " + codec_id_name + " decoder did not start (" +
                           av_error_text(r) + ")");
  codec_name = codec_id_name;

  const AVRational rate = av_guess_frame_rate(fmt, st, nullptr);
  const double guessed = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
  fps = guessed > 0.0 && guessed <= 1000.0 ? guessed : kDefaultFps;  // beyond 1000 is a timebase, not a rate
  return true;
}

bool VideoSource::Impl::prime(std::string* error) {
  const auto start = Clock::now();
  if (!decode_next(error)) {
    if (kind == Kind::kCamera) *error = "camera " + input + " opened but delivered no frame" + last_error_suffix();
    return false;
  }
  if (av_image_check_size(static_cast<unsigned>(decoded->width), static_cast<unsigned>(decoded->height), 0,
                          nullptr) < 0)
    return fail(error, "cannot decode " + input + ": the first frame has an invalid size " +
                           std::to_string(decoded->width) + "x" + std::to_string(decoded->height));
  const auto pix_fmt = static_cast<AVPixelFormat>(decoded->format);
  if (!sws_isSupportedInput(pix_fmt)) {
    const char* name = av_get_pix_fmt_name(pix_fmt);
    return fail(error, "cannot decode " + input + ": its pixel format " + (name ? name : "(unknown)") +
                           " cannot be converted to RGBA by this FFmpeg's libswscale");
  }
  width = decoded->width;
  height = decoded->height;
  if (codec->codec_id == AV_CODEC_ID_RAWVIDEO) {
    if (const char* name = av_get_pix_fmt_name(pix_fmt)) codec_name = name;
  }
  pending = true;
  pending_ms = ms_since(start);
  return true;
}

bool VideoSource::Impl::decode_next(std::string* error) {
  for (;;) {
    int r = avcodec_receive_frame(codec.get(), decoded.get());
    if (r >= 0) {
      packets_since_frame = 0;
      ++frames_this_pass;
      ++frames_decoded;
      return true;
    }
    if (r == AVERROR_EOF || (draining && r == AVERROR(EAGAIN))) {
      if (!end_of_stream(error)) return false;
      continue;
    }
    if (r != AVERROR(EAGAIN)) {
      last_error = av_error_text(r);
      if (++packets_since_frame > kMaxPacketsWithoutFrame) break;
      continue;
    }

    r = av_read_frame(format.get(), packet.get());
    if (r == AVERROR(EAGAIN)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (r < 0) {
      if (r == AVERROR_EOF || (format->pb && avio_feof(format->pb))) {
        avcodec_send_packet(codec.get(), nullptr);  // the decoder still holds delayed frames
        draining = true;
        continue;
      }
      last_error = av_error_text(r);
      // Some demuxers report damaged data and then resync; I/O errors do not recover.
      if (kind == Kind::kFile && r == AVERROR_INVALIDDATA && ++packets_since_frame <= kMaxPacketsWithoutFrame)
        continue;
      if (kind == Kind::kCamera)
        return fail(error, "camera " + input + " stopped delivering frames (unplugged?): " + last_error);
      return fail(error, "cannot read " + input + ": " + last_error);
    }
    if (packet->stream_index != stream_index) {
      av_packet_unref(packet.get());
      continue;
    }
    r = avcodec_send_packet(codec.get(), packet.get());
    av_packet_unref(packet.get());
    if (r < 0 && r != AVERROR(EAGAIN)) last_error = av_error_text(r);  // a bad packet: skip it
    if (++packets_since_frame > kMaxPacketsWithoutFrame) break;
  }
  return fail(error, "cannot decode " + input + ": no frame decoded from " + std::to_string(kMaxPacketsWithoutFrame) +
                         " packets in a row" + last_error_suffix());
}

bool VideoSource::Impl::end_of_stream(std::string* error) {
  if (kind == Kind::kCamera) return fail(error, "camera " + input + " stopped delivering frames (unplugged?)");
  if (kind != Kind::kFile) return fail(error, input + " ended unexpectedly");
  if (frames_this_pass == 0 && frames_decoded > 0)
    return fail(error,
                "cannot loop " + input + ": no frame decoded after seeking back to its start" + last_error_suffix());
  if (frames_this_pass == 0)
    return fail(error,
                "cannot decode " + input + ": no frame could be decoded in the whole file" + last_error_suffix());
  return rewind(error);
}

bool VideoSource::Impl::rewind(std::string* error) {
  // A seek on a pipe can appear to work inside avio's buffer and then deliver nothing; refuse up front.
  if (format->pb && !(format->pb->seekable & AVIO_SEEKABLE_NORMAL))
    return fail(error, "cannot loop " + input + ": it is a pipe or stream, which cannot seek back to its start " +
                           "(play a regular file to loop)");
  // Timestamp seeks in MPEG-TS/PS land on a later keyframe, so those go back by bytes (as ffplay does).
  const bool by_bytes = (format->iformat->flags & AVFMT_TS_DISCONT) && std::strcmp(format->iformat->name, "ogg") != 0;
  int r = by_bytes ? av_seek_frame(format.get(), -1, 0, AVSEEK_FLAG_BYTE) : -1;
  AVStream* st = format->streams[stream_index];
  const int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
  if (r < 0) r = av_seek_frame(format.get(), stream_index, start, AVSEEK_FLAG_BACKWARD);
  if (r < 0) r = avformat_seek_file(format.get(), stream_index, INT64_MIN, start, INT64_MAX, 0);
  if (r < 0) r = av_seek_frame(format.get(), -1, 0, AVSEEK_FLAG_BYTE);  // raw streams without timestamps
  if (r < 0)
    return fail(error, "cannot loop " + input + ": seeking back to its start failed (" + av_error_text(r) +
                           ")");
  avcodec_flush_buffers(codec.get());
  draining = false;
  frames_this_pass = 0;
  return true;
}

bool VideoSource::Impl::convert(Frame& frame, std::string* error) {
  const AVFrame* f = decoded.get();
  const bool size_or_format_changed = f->width != sws_width || f->height != sws_height || f->format != sws_format;
  if (!sws || size_or_format_changed) {
    // Bicubic, like the ffmpeg CLI: it only matters for odd sizes and mid-stream size changes; even-sized
    // 4:2:0 takes swscale's unscaled fast path whatever the flags.
    sws.reset(sws_getContext(f->width, f->height, static_cast<AVPixelFormat>(f->format), width, height,
                             AV_PIX_FMT_RGBA, SWS_BICUBIC, nullptr, nullptr, nullptr));
    if (!sws) {
      const char* name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(f->format));
      return fail(error, "cannot convert " + input + " frames from " + (name ? name : "an unknown pixel format") +
                             " to RGBA");
    }
    sws_width = f->width;
    sws_height = f->height;
    sws_format = f->format;
    sws_colorspace = -1;
  }
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
  const bool rgb_source = desc && (desc->flags & AV_PIX_FMT_FLAG_RGB);
  const bool full_range = f->color_range == AVCOL_RANGE_JPEG || is_full_range_format(f->format);
  if (!rgb_source && (f->colorspace != sws_colorspace || full_range != sws_full_range)) {
    // swscale assumes BT.601 limited range unless told; HD video is usually BT.709, cameras often full range.
    sws_setColorspaceDetails(sws.get(), sws_getCoefficients(f->colorspace), full_range ? 1 : 0,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
    sws_colorspace = f->colorspace;
    sws_full_range = full_range;
  }

  frame.rgba.resize(static_cast<size_t>(width) * height * 4);
  uint8_t* dst[4] = {frame.rgba.data(), nullptr, nullptr, nullptr};
  const int dst_stride[4] = {width * 4, 0, 0, 0};
  const int rows = sws_scale(sws.get(), f->data, f->linesize, 0, f->height, dst, dst_stride);
  if (rows <= 0) return fail(error, "cannot convert " + input + " frame " + std::to_string(next_index) + " to RGBA");
  if (desc && (desc->flags & (AV_PIX_FMT_FLAG_ALPHA | AV_PIX_FMT_FLAG_PAL))) {
    // The viewer shows frames opaque; a source's transparency must not leak into blending.
    for (size_t i = 3; i < frame.rgba.size(); i += 4) frame.rgba[i] = 255;
  }
  return true;
}

bool VideoSource::Impl::read(Frame& frame, std::string* error) {
  if (!broken.empty()) return fail(error, broken);
  const auto start = Clock::now();
  double earlier_ms = 0.0;
  if (kind == Kind::kPattern) {
    draw_pattern(frame.rgba, width, height, next_index);
  } else {
    if (pending) {
      pending = false;
      earlier_ms = pending_ms;
    } else if (!decode_next(error)) {
      broken = *error;
      return false;
    }
    if (!convert(frame, error)) {
      broken = *error;
      return false;
    }
  }
  frame.width = width;
  frame.height = height;
  frame.index = next_index++;
  frame.decode_ms = earlier_ms + ms_since(start);
  return true;
}

VideoSource::VideoSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VideoSource::~VideoSource() = default;

std::unique_ptr<VideoSource> VideoSource::open(const std::string& input, int width_hint, int height_hint,
                                               std::string* error) {
  init_ffmpeg();
  std::string ignored;
  if (!error) error = &ignored;
  if (input.empty()) {
    *error = "no input given (pass a video file, a camera such as /dev/video0, or testsrc)";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->input = input;
  bool ok = false;
  if (input == "testsrc") {
    ok = impl->open_testsrc(width_hint, height_hint, error);
  } else {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status status = fs::status(input, ec);
    const bool under_dev = input.rfind("/dev/", 0) == 0;
    if (status.type() == fs::file_type::not_found) {
      *error = under_dev ? "no camera at " + input + " (is it connected? " + kListCameras + ")"
                         : "no such file: " + input + " (check the path, or pass testsrc for a test pattern)";
    } else if (status.type() == fs::file_type::none && ec == std::errc::permission_denied) {
      *error = "permission denied reading " + input + " (a folder on its path is not accessible)";
    } else if (status.type() == fs::file_type::directory) {
      *error = input + " is a folder, not a video file (pass a file inside it)";
    } else if (status.type() == fs::file_type::character) {
      ok = impl->open_camera(width_hint, height_hint, error);
    } else {
      ok = impl->open_file(error);
    }
  }
  if (!ok) return nullptr;
  return std::unique_ptr<VideoSource>(new VideoSource(std::move(impl)));
}

bool VideoSource::live() const { return impl_->kind != Kind::kFile; }
int VideoSource::width() const { return impl_->width; }
int VideoSource::height() const { return impl_->height; }
double VideoSource::fps() const { return impl_->fps; }

bool VideoSource::read(Frame& frame, std::string* error) {
  std::string ignored;
  return impl_->read(frame, error ? error : &ignored);
}

std::string VideoSource::describe() const {
  std::string name = impl_->input;
  if (impl_->kind == Kind::kFile) {
    const std::string base = std::filesystem::path(name).filename().string();
    if (!base.empty()) name = base;
  }
  char tail[64];
  std::snprintf(tail, sizeof tail, " %dx%d %.4g fps", impl_->width, impl_->height, impl_->fps);
  return name + ": " + impl_->codec_name + tail;
}

}  // namespace viewer
