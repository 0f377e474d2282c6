//===- base/src/child_process.cpp - Running a helper tool ----------===//
//
// One runner for every child process ireepkg starts. The child's stdin is
// /dev/null or a memfd holding its input (a file, so a large input cannot
// deadlock against its output); stdout, stderr and optionally descriptor 3
// are pipes read with poll(). The end of the child is noticed with
// waitid(WNOWAIT), which leaves it unreaped: its process group cannot be
// reused while whatever is left in it is killed.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/child_process.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/base/file_util.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ireepkg {

namespace {

using fsutil::UniqueFd;
using Clock = std::chrono::steady_clock;

/// How long output is still read after the child has ended, when its
/// descendants keep the pipes open.
constexpr auto kLingerAfterExit = std::chrono::milliseconds(500);
/// How often a running child is checked for having ended while its output
/// is still open.
constexpr int64_t kTickMs = 50;

/// `fd` moved above the standard descriptors and 3, close-on-exec, so that
/// no dup2 in the child maps a descriptor onto itself or onto one that is
/// still to be moved.
UniqueFd moveHigh(int fd) {
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return UniqueFd(high);
}

Status makePipe(UniqueFd &readEnd, UniqueFd &writeEnd) {
  int raw[2];
  if (::pipe(raw) != 0)
    return makeError(ErrorCode::Io, std::string("cannot create a pipe: ") +
                                        std::strerror(errno));
  readEnd = moveHigh(raw[0]);
  int err = errno;
  writeEnd = moveHigh(raw[1]);
  if (writeEnd.get() < 0)
    err = errno;
  if (readEnd.get() < 0 || writeEnd.get() < 0)
    return makeError(ErrorCode::Io, std::string("cannot create a pipe: ") +
                                        std::strerror(err));
  return ok();
}

/// A memfd holding `input`, positioned at its start.
Expected<UniqueFd> inputFile(const std::string &input,
                             const std::string &name) {
  int raw = ::memfd_create("ireepkg-child-input", MFD_CLOEXEC);
  if (raw < 0)
    return makeError(ErrorCode::Io,
                     std::string("memfd_create: ") + std::strerror(errno));
  UniqueFd fd = moveHigh(raw);
  if (fd.get() < 0)
    return makeError(ErrorCode::Io,
                     std::string("memfd_create: ") + std::strerror(errno));
  size_t done = 0;
  while (done < input.size()) {
    ssize_t n = ::write(fd.get(), input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return makeError(ErrorCode::Io, "cannot write the input of " + name +
                                          ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0)
    return makeError(ErrorCode::Io, "cannot write the input of " + name + ": " +
                                        std::strerror(errno));
  return fd;
}

/// One output of the child being read.
struct Stream {
  UniqueFd fd;
  std::string *sink;
  size_t limit;
};

/// Whether variable `name` passes into a child that runs package code.
bool keptForPackageCode(std::string_view name) {
  static constexpr std::string_view kExact[] = {"PATH",
                                                "HOME",
                                                "TMPDIR",
                                                "TZ",
                                                "TERM",
                                                "LANG",
                                                "LANGUAGE",
                                                "LD_LIBRARY_PATH",
                                                "USER",
                                                "LOGNAME",
                                                "LLVM_SYMBOLIZER_PATH",
                                                "MLIR_CRASH_REPRODUCER"};
  for (std::string_view e : kExact)
    if (name == e)
      return true;
  const auto starts = [&](std::string_view p) {
    return name.substr(0, p.size()) == p;
  };
  const auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.substr(name.size() - s.size()) == s;
  };
  return starts("LC_") || (starts("IREE_") && !starts("IREEPKG_")) ||
         ends("SAN_OPTIONS");
}

} // namespace

std::vector<std::string> packageCodeEnvironment() {
  std::vector<std::string> out;
  for (char **e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string_view::npos && keptForPackageCode(entry.substr(0, eq)))
      out.emplace_back(entry);
  }
  return out;
}

Expected<bool> loadChecksEnabled() {
  const char *v = environmentOverride("IREEPKG_LOAD_CHECKS");
  if (!v || !*v)
    return true;
  std::string s = v;
  for (const char *on : {"1", "true", "yes", "on"})
    if (s == on)
      return true;
  for (const char *off : {"0", "false", "no", "off"})
    if (s == off)
      return false;
  return makeError(ErrorCode::Usage,
                   "IREEPKG_LOAD_CHECKS=\"" + s + "\" is not on or off", {},
                   "set it to 0 (load no package code to check it) or 1, or "
                   "unset it");
}

Expected<ChildResult> runChild(const ChildOptions &options) {
  if (options.argv.empty())
    return makeError(ErrorCode::Internal, "runChild: no program to run");
  const std::string &program = options.argv.front();
  const std::string name = !options.name.empty()
                               ? options.name
                               : program.substr(program.rfind('/') + 1);

  UniqueFd input;
  if (options.input) {
    auto fd = inputFile(*options.input, name);
    if (!fd)
      return Unexpected(fd.error());
    input = std::move(*fd);
  }
  ChildResult result;
  std::vector<Stream> streams;
  std::vector<UniqueFd> writeEnds;
  const int outputs = options.captureFd3 ? 3 : 2;
  std::string *sinks[3] = {&result.out, &result.err, &result.fd3};
  const size_t limits[3] = {options.maxOut, options.maxErr, options.maxFd3};
  for (int i = 0; i < outputs; ++i) {
    UniqueFd readEnd, writeEnd;
    if (Status s = makePipe(readEnd, writeEnd); !s)
      return Unexpected(s.error());
    streams.push_back({std::move(readEnd), sinks[i], limits[i]});
    writeEnds.push_back(std::move(writeEnd));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.input)
    posix_spawn_file_actions_adddup2(&actions, input.get(), STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                     O_RDONLY, 0);
  for (int i = 0; i < outputs; ++i)
    posix_spawn_file_actions_adddup2(&actions, writeEnds[i].get(), i + 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD})
    sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.ownProcessGroup) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  std::vector<char *> argv;
  for (const std::string &a : options.argv)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> kept;
  std::vector<char *> envp;
  if (options.runsPackageCode) {
    kept = packageCodeEnvironment();
    for (std::string &e : kept)
      envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(),
                         options.runsPackageCode ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  input.reset();
  writeEnds.clear();
  if (rc != 0) {
    if (options.hintIfNotStarted)
      return makeError(ErrorCode::Io,
                       "cannot run " + program + ": " + std::strerror(rc), {},
                       *options.hintIfNotStarted);
    result.spawnError = rc;
    return result;
  }

  std::optional<Clock::time_point> deadline;
  if (options.timeoutSeconds)
    deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(
                                  *options.timeoutSeconds * 1000));
  std::optional<Clock::time_point> exitedAt;
  std::vector<pollfd> fds;
  char buffer[65536];
  for (;;) {
    if (!exitedAt) {
      siginfo_t info{};
      // Nothing left to read and no deadline: just wait for the end.
      bool block = streams.empty() && !deadline;
      int waitFlags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, waitFlags) != 0) {
        if (errno == EINTR)
          continue;
        break; // waitpid below says why
      }
      if (info.si_pid == pid)
        exitedAt = Clock::now();
    }
    const auto now = Clock::now();
    if (exitedAt && (streams.empty() || now - *exitedAt > kLingerAfterExit))
      break;
    if (!exitedAt && deadline && now >= *deadline) {
      result.timedOut = true;
      break;
    }
    // Sleep until output arrives, the next check for the child's end, the
    // deadline, or the end of the lingering.
    int64_t waitMs = streams.empty() ? 10 : kTickMs;
    auto until = [&](Clock::time_point t) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(t - now)
          .count();
    };
    if (exitedAt)
      waitMs = std::min(waitMs, until(*exitedAt + kLingerAfterExit));
    else if (deadline)
      waitMs = std::min(waitMs, until(*deadline));
    waitMs = std::max<int64_t>(waitMs, 1);

    fds.clear();
    for (const Stream &s : streams)
      fds.push_back({s.fd.get(), POLLIN, 0});
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(waitMs));
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      // Stop reading; the child then ends on a broken pipe, or times out.
      result.readError = "cannot read the output of " + name +
                         ": poll: " + std::strerror(errno);
      streams.clear();
      continue;
    }
    if (ready == 0)
      continue;
    for (size_t i = fds.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
        continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0) {
        if (n < 0)
          result.readError = "cannot read the output of " + name +
                             ": read: " + std::strerror(errno);
        streams.erase(streams.begin() + static_cast<ptrdiff_t>(i));
        continue;
      }
      Stream &s = streams[i];
      if (s.sink->size() < s.limit)
        s.sink->append(
            buffer, std::min(static_cast<size_t>(n), s.limit - s.sink->size()));
    }
  }
  streams.clear();

  // The child is not reaped yet, so its process group id is still its own.
  if (result.timedOut)
    ::kill(pid, SIGKILL);
  if (options.ownProcessGroup)
    ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return makeError(ErrorCode::Internal,
                       "cannot wait for " + name + ": " + std::strerror(errno));
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

std::string firstOutputLine(const std::string &text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

std::string describeAbnormalEnd(const ChildResult &r, const std::string &tool,
                                double timeoutSeconds) {
  if (r.timedOut) {
    std::ostringstream limit;
    limit << timeoutSeconds;
    return tool + " did not finish within " + limit.str() + " s (stopped)";
  }
  if (r.signal) {
    const char *name = strsignal(r.signal);
    return tool + " was killed by signal " + std::to_string(r.signal) +
           (name ? std::string(" (") + name + ")" : "");
  }
  if (r.exitCode != 0) {
    std::string said = firstOutputLine(r.err.empty() ? r.out : r.err);
    return tool + " failed (exit status " + std::to_string(r.exitCode) + ")" +
           (said.empty() ? "" : ": " + said);
  }
  return "";
}

std::string describeToolOutput(const ChildResult &r) {
  const std::string &text = r.err.empty() ? r.out : r.err;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      lines.push_back(line);
  if (lines.empty())
    return "";
  constexpr size_t kShown = 20;
  std::string out = "; it printed:";
  size_t first = lines.size() > kShown ? lines.size() - kShown : 0;
  if (first)
    out += "\n      [" + std::to_string(first) + " lines before these]";
  for (size_t i = first; i < lines.size(); ++i)
    out += "\n      " + lines[i];
  return out;
}

} // namespace ireepkg
