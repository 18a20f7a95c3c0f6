// Result files that are never left half-written: checked writes with the reason of a failure.
//
// LineFile streams a text file of lines (trajectory.csv, events.csv, reactions.csv) through a
// std::streambuf that hands the kernel only complete lines: it buffers up to kBufferBytes and
// then writes every complete line it holds in one write(2) loop, keeping the unfinished tail.
// On disk the file therefore ends with a whole line whenever the process stops, with one
// exception: SIGKILL can cut a write(2) to a regular file at a page boundary (Linux copies a
// write page by page and stops between pages when a fatal signal is pending, keeping the pages
// copied: mm/filemap.c, generic_perform_write), so after `kill -9` the last line may be cut at an
// offset that is a multiple of the page size; every line before it is whole. No user-space write
// pattern avoids that without padding the lines. Flush() pushes the complete lines out at once
// (events.csv after every event). The
// first failing write (ENOSPC, EIO, EFBIG, ...) is recorded with its errno text, the file is cut
// back to the last complete line that was written, and every later write fails fast (the
// stream's badbit is set), so the caller can stop the run and report error().
//
// WriteFileAtomically writes a small file (summary.json, last_state.json) to "<path>.tmp" and
// renames it over path: the file is either complete or absent.
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace saltus::tools {

class LineFile {
 public:
  static constexpr std::size_t kBufferBytes = 1 << 16;

  // Creates or truncates `path`; on failure ok() is false and error() says why.
  explicit LineFile(std::filesystem::path path);
  ~LineFile();  // writes what is left
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;

  std::ostream& stream() { return stream_; }
  // Writes every complete line now. False (and error() set) when a write failed, now or before.
  bool Flush();
  // Writes everything (an unfinished last line too) and closes the file. False on failure.
  bool Close();
  bool ok() const { return error_.empty(); }
  // "<path>: <errno text>" of the first failure; empty while ok.
  const std::string& error() const { return error_; }
  const std::filesystem::path& path() const { return path_; }
  // Bytes given to the file so far: on disk and buffered.
  long long bytes() const { return committed_ + static_cast<long long>(pending_.size()); }

 private:
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(LineFile* file) : file_(file) {}

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    LineFile* file_;
  };
  // Writes bytes [0, n) of pending_ (n at a line end, or all at Close) and drops them.
  bool WritePending(std::size_t n);
  bool WriteCompleteLines();

  std::filesystem::path path_;
  int fd_ = -1;
  std::string error_;
  std::vector<char> pending_;
  long long committed_ = 0;  // bytes on disk, all of them whole lines
  Buffer buffer_;
  std::ostream stream_;
};

// Writes `text` to path through "<path>.tmp" and a rename. Returns "" or "<path>: <reason>".
std::string WriteFileAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace saltus::tools
