//===- test_child_process.cpp - Running helper tools ----------------------===//
//
// runChild on /bin/sh and /bin/cat: input, exit status, signals, output
// limits, descriptor 3, a program that does not exist, the time limit with
// the process group killed, and descendants that keep the pipes open.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/child_process.h"

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

using namespace ireepkg;

namespace {

ChildResult run(ChildOptions options) {
  Expected<ChildResult> r = runChild(options);
  REQUIRE(r);
  return *r;
}

ChildOptions shell(const std::string &script) {
  ChildOptions options;
  options.argv = {"/bin/sh", "-c", script};
  return options;
}

/// Whether `pid` is gone (or a zombie about to be reaped), waiting at most
/// two seconds for it.
bool gone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!stat || !std::getline(stat, text))
      return true;
    size_t close = text.rfind(')');
    if (close != std::string::npos && close + 2 < text.size() &&
        text[close + 2] == 'Z')
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

TEST_CASE("runChild: input, output and exit status") {
  SUBCASE("stdin is the input; a large one does not block") {
    ChildOptions options;
    options.argv = {"/bin/cat"};
    options.input = std::string(3 << 20, 'x') + "end";
    ChildResult r = run(options);
    CHECK(r.spawnError == 0);
    CHECK(r.exited);
    CHECK(r.exitCode == 0);
    CHECK(r.out == *options.input);
    CHECK(r.err.empty());
    CHECK(r.readError.empty());
  }
  SUBCASE("without input, stdin is empty") {
    ChildResult r = run(shell("wc -c"));
    CHECK(r.exited);
    CHECK(r.out.find('0') != std::string::npos);
  }
  SUBCASE("exit status and stderr") {
    ChildResult r = run(shell("echo out; echo oops >&2; exit 3"));
    CHECK(r.exited);
    CHECK(r.exitCode == 3);
    CHECK(r.signal == 0);
    CHECK(r.out == "out\n");
    CHECK(r.err == "oops\n");
  }
  SUBCASE("killed by a signal") {
    ChildResult r = run(shell("kill -SEGV $$"));
    CHECK_FALSE(r.exited);
    CHECK(r.signal == SIGSEGV);
    CHECK_FALSE(r.timedOut);
  }
  SUBCASE("outputs beyond their limits are read and dropped") {
    ChildOptions options =
        shell("head -c 1000000 /dev/zero; head -c 500000 /dev/zero >&2");
    options.maxOut = 10;
    options.maxErr = 20;
    ChildResult r = run(options);
    CHECK(r.exited);
    CHECK(r.exitCode == 0);
    CHECK(r.out == std::string(10, '\0'));
    CHECK(r.err == std::string(20, '\0'));
  }
  SUBCASE("descriptor 3") {
    ChildOptions options = shell("echo loading >&3; echo done >&3; echo out");
    options.captureFd3 = true;
    options.maxFd3 = 12;
    ChildResult r = run(options);
    CHECK(r.exitCode == 0);
    CHECK(r.fd3 == "loading\ndone");
    CHECK(r.out == "out\n");
  }
  SUBCASE("a program that does not exist is not started") {
    ChildOptions options;
    options.argv = {"/nonexistent/ireepkg-tool", "--version"};
    ChildResult r = run(options);
    CHECK(r.spawnError == ENOENT);
    CHECK_FALSE(r.exited);
    options.hintIfNotStarted = "install it";
    Expected<ChildResult> failed = runChild(options);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == ErrorCode::Io);
    CHECK(failed.error().message ==
          "cannot run /nonexistent/ireepkg-tool: No such file or directory");
    CHECK(failed.error().hint == "install it");
  }
  SUBCASE("no program") {
    Expected<ChildResult> r = runChild(ChildOptions{});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::Internal);
  }
}

TEST_CASE("runChild: time limit and process group") {
  SUBCASE("a child that does not end in time is killed with its group") {
    ChildOptions options = shell("sleep 30 & echo $!; echo started >&2; wait");
    options.timeoutSeconds = 0.3;
    options.ownProcessGroup = true;
    auto start = std::chrono::steady_clock::now();
    ChildResult r = run(options);
    CHECK(secondsSince(start) < 10);
    CHECK(r.timedOut);
    CHECK(r.signal == SIGKILL);
    CHECK(r.err == "started\n"); // what was written before is kept
    REQUIRE(!r.out.empty());
    pid_t sleeper = static_cast<pid_t>(std::stol(r.out));
    CHECK(gone(sleeper));
  }
  SUBCASE("descendants keeping the pipes open do not hold up the result") {
    ChildOptions options = shell("sleep 30 & echo $!");
    options.ownProcessGroup = true;
    auto start = std::chrono::steady_clock::now();
    ChildResult r = run(options);
    CHECK(secondsSince(start) < 10);
    CHECK_FALSE(r.timedOut);
    CHECK(r.exited);
    CHECK(r.exitCode == 0);
    REQUIRE(!r.out.empty());
    pid_t sleeper = static_cast<pid_t>(std::stol(r.out));
    CHECK(gone(sleeper)); // the rest of its group is killed
  }
  SUBCASE("a quick child is not timed out") {
    ChildOptions options = shell("echo hi");
    options.timeoutSeconds = 20;
    ChildResult r = run(options);
    CHECK_FALSE(r.timedOut);
    CHECK(r.out == "hi\n");
  }
}
