//===- registry/src/client/client_prefetch.cpp ----------------------------===//
//
// Index files read ahead of the resolver.
//
// RegistryClient::prefetch: the resolver says which packages it is about to
// ask for (the dependencies of the version it just chose), and their index
// files are fetched, checked against the snapshot's SHA-256 and parsed on a
// second thread while it goes on, as uv reads metadata ahead of its
// resolver. On a cold cache that takes reading, hashing, parsing and
// encoding each file off the resolver's path; over HTTP the files of one
// hint are fetched in parallel (Transport::fetchMany) instead of one round
// trip each.
//
// The thread has its own transport (Transport::concurrentCopy) and shares
// nothing with the client but the Prefetcher's queue and results, under
// its mutex. It reports nothing and decides nothing: it keeps a file only
// when its bytes have the SHA-256 asked for and the fast parser takes them
// clean (manifest_schema/fast_index.h) as the package asked for. Anything
// else (missing, another hash, a warning, an error) is dropped, and the
// client reads that file again itself and reports it exactly as without
// prefetching; so does a snapshot that changed meanwhile (take() wants the
// hash pinned now). When the client needs a file the thread has not
// started, it takes it off the queue and reads it itself rather than wait.
// The resolver's choices do not depend on any of this: lockfiles are the
// same byte for byte.
//
//===----------------------------------------------------------------------===//
#include "client_impl.h"

namespace ireepkg::registry {

namespace {

/// The most files the thread takes off the queue at once, when its
/// transport fetches several at a time (HTTP): fetched together, then
/// parsed one by one. Otherwise it takes one at a time, and the client
/// never waits behind a batch for a file the thread has not started.
constexpr size_t kMaxBatch = 16;

} // namespace

namespace detail {

Prefetcher::Prefetcher(std::unique_ptr<Transport> transport)
    : transport_(std::move(transport)) {
  thread_ = std::thread([this] { run(); });
}

bool Prefetcher::add(const std::string &name, const std::string &sha) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ ||
        !items_.try_emplace(name, Item{State::Queued, sha, {}}).second)
      return false;
    queue_.push_back(name);
  }
  changed_.notify_all();
  return true;
}

std::optional<Prefetcher::Result> Prefetcher::take(const std::string &name,
                                                   const std::string &sha) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = items_.find(name);
  if (it == items_.end())
    return std::nullopt;
  if (it->second.state == State::Queued) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), name));
    items_.erase(it);
    return std::nullopt;
  }
  changed_.wait(lock, [&] {
    it = items_.find(name);
    return it == items_.end() || it->second.state == State::Done;
  });
  if (it == items_.end())
    return std::nullopt;
  std::optional<Result> out;
  if (it->second.sha == sha)
    out = std::move(it->second.result);
  items_.erase(it);
  return out;
}

void Prefetcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    for (const std::string &name : queue_)
      items_.erase(name);
    queue_.clear();
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void Prefetcher::run() {
  const size_t batch =
      std::clamp<size_t>(transport_->parallelFetches(), 1, kMaxBatch);
  std::vector<std::string> names, shas, rels;
  for (;;) {
    names.clear();
    shas.clear();
    rels.clear();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      // From the back: the files asked for last are needed last, and the
      // client takes the first ones itself if it comes to them before
      // this thread does (take()), so that the two rarely wait for each
      // other.
      while (!queue_.empty() && names.size() < batch) {
        Item &item = items_.at(queue_.back());
        item.state = State::Working;
        names.push_back(queue_.back());
        shas.push_back(item.sha);
        rels.push_back("index/" + queue_.back() + ".json");
        queue_.pop_back();
      }
    }
    auto fetched = transport_->fetchMany(rels, kMaxIndexBytes);
    for (size_t i = 0; i < names.size(); ++i) {
      std::optional<Result> result;
      if (i < fetched.size() && fetched[i] &&
          Sha256::hex(fetched[i]->body) == shas[i])
        if (auto idx = parseCleanRegistryIndex(fetched[i]->body);
            idx && idx->name == names[i]) {
          // Only the frame leaves the thread: what the parse allocated is
          // freed here and reused for the next file, so that the thread
          // touches little fresh memory (every page a command touches for
          // the first time costs it), and the client reads the frame as
          // it reads the pack's.
          result.emplace();
          result->url = std::move(fetched[i]->url);
          result->fromCache = fetched[i]->fromCache;
          result->frame = encodeParsedIndex(*idx, shas[i]);
        }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        Item &item = items_.at(names[i]);
        item.state = State::Done;
        item.result = std::move(result);
      }
      changed_.notify_all();
    }
  }
}

} // namespace detail

void RegistryClient::Impl::prefetch(const std::vector<std::string> &names) {
  if (prefetchUnavailable)
    return;
  for (const std::string &name : names) {
    if (indices.count(name) || candidates.count(name))
      continue;
    auto pinned = pin(name);
    if (!pinned)
      continue; // not listed: versions() says so
    const std::string sha = pinned->substr(7);
    loadPack();
    if (!rechecking() && packed.count(sha))
      continue; // parsed in the cache: read at once when asked for
    if (!prefetcher) {
      std::unique_ptr<Transport> copy = transport->concurrentCopy();
      if (copy) {
        try {
          prefetcher = std::make_unique<Prefetcher>(std::move(copy));
        } catch (const std::system_error &) {
          // No thread to be had (a process or container limit): read
          // each file when it is asked for, as without prefetching.
        }
      }
      if (!prefetcher) {
        prefetchUnavailable = true;
        return;
      }
    }
    prefetcher->add(name, sha);
  }
}

void RegistryClient::prefetch(const std::vector<std::string> &names) {
  impl_->prefetch(names);
}

} // namespace ireepkg::registry
