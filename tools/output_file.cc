#include "tools/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace saltus::tools {

namespace {

std::string Reason(const std::filesystem::path& path, int err) {
  return path.string() + ": " + std::strerror(err);
}

// write(2) of all n bytes, retried on EINTR and short writes; 0 or the errno of the failure.
int WriteAll(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

}  // namespace

LineFile::LineFile(std::filesystem::path path)
    : path_(std::move(path)), buffer_(this), stream_(&buffer_) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = Reason(path_, errno);
    stream_.setstate(std::ios::badbit);
  }
  pending_.reserve(kBufferBytes);
}

LineFile::~LineFile() { Close(); }

bool LineFile::WritePending(std::size_t n) {
  if (!ok()) {
    pending_.clear();
    return false;
  }
  if (n == 0) return true;
  const int err = WriteAll(fd_, pending_.data(), n);
  if (err != 0) {
    error_ = Reason(path_, err);
    // Cut a partly written line; the file ends with the last whole line (best effort: a device
    // such as /dev/full cannot be truncated, and then holds nothing anyway).
    const int truncated = ::ftruncate(fd_, static_cast<off_t>(committed_));
    (void)truncated;
    pending_.clear();
    stream_.setstate(std::ios::badbit);
    return false;
  }
  committed_ += static_cast<long long>(n);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  return true;
}

bool LineFile::WriteCompleteLines() {
  const auto last = std::find(pending_.rbegin(), pending_.rend(), '\n');
  if (last == pending_.rend()) return ok();
  return WritePending(static_cast<std::size_t>(pending_.rend() - last));
}

bool LineFile::Flush() { return WriteCompleteLines(); }

bool LineFile::Close() {
  if (fd_ < 0) return ok();
  WritePending(pending_.size());
  if (::close(fd_) != 0 && ok()) error_ = Reason(path_, errno);
  fd_ = -1;
  return ok();
}

LineFile::Buffer::int_type LineFile::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

std::streamsize LineFile::Buffer::xsputn(const char* s, std::streamsize n) {
  if (!file_->ok() || file_->fd_ < 0) return 0;
  file_->pending_.insert(file_->pending_.end(), s, s + n);
  if (file_->pending_.size() >= kBufferBytes && !file_->WriteCompleteLines()) return 0;
  return n;
}

int LineFile::Buffer::sync() { return file_->WriteCompleteLines() ? 0 : -1; }

std::string WriteFileAtomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Reason(path, errno);
  int err = WriteAll(fd, text.data(), text.size());
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return Reason(path, err);
  }
  return {};
}

}  // namespace saltus::tools
