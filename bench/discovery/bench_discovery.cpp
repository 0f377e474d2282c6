//===- bench_discovery.cpp - Discovering 1,000 runtime plugins ------------===//
//
// Builds a prefix with N installed packages of one runtime plugin each (3 of
// 4 embedded ELF for x86_64 and aarch64, 1 of 4 a system library), written
// two ways:
//   - the index: <prefix>/state/runtime.index from ireepkg::encodeRuntimeIndex,
//     read through libireepkg_runtime (open + list for the host + close);
//   - the naive layout the index replaces: walk <prefix>/packages/*/*/, read
//     and parse every ireeplugin.json (nlohmann/json), select each plugin's
//     library for the host.
// Both produce the same plugins (checked), and each is timed over many
// iterations (in 5 rounds) on a warm page cache. Prints one JSON object
// (bench/discovery/run.py makes the table).
//
// Usage: ireepkg_bench_discovery --work DIR [--plugins 1000]
//        [--iterations 5000] [--naive-iterations 100]
//
//===----------------------------------------------------------------------===//
#include "ireepkg/runtime.h"
#include "ireepkg/runtime_integration/runtime_index.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Found {
  std::string name, package, version, path, spec;
  bool operator==(const Found &) const = default;
};

void writeFile(const fs::path &path, const std::string &bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(2);
  }
}

/// The prefix: packages with manifests and library files, and the index.
void makePrefix(const fs::path &prefix, int count, const std::string &host) {
  fs::remove_all(prefix);
  ireepkg::RuntimeIndexInput input;
  input.prefix = prefix.string();
  input.platform = host;
  const std::string arch = host.substr(host.find('-') + 1);
  for (int i = 0; i < count; ++i) {
    char name[64];
    std::snprintf(name, sizeof(name), "bench-plugin-%04d", i);
    const std::string package = name, version = "1.0.0";
    const std::string plugin = "plugin_" + package.substr(13);
    const fs::path dir = prefix / "packages" / package / version;
    const bool system = i % 4 == 3;
    nlohmann::ordered_json libs = nlohmann::ordered_json::object();
    ireepkg::RuntimeIndexPlugin p;
    p.name = plugin;
    p.package = package;
    p.packageVersion = version;
    p.format = system ? "system-library" : "embedded-elf";
    std::vector<std::pair<std::string, std::string>> files;
    if (system) {
      files = {{host, "runtime/" + host + "/lib" + plugin + ".so"}};
    } else {
      files = {{"aarch64", "runtime/" + plugin + ".aarch64.so"},
               {"x86_64", "runtime/" + plugin + ".x86_64.so"}};
    }
    for (const auto &[key, rel] : files) {
      libs[key] = rel;
      writeFile(dir / rel, "\x7f"
                           "ELF plugin bytes\n");
      p.libraries.emplace_back(key, (dir / rel).string());
    }
    p.imports = {plugin + "_workgroup"};
    p.parameters = {{"verbose", "0"}};
    nlohmann::ordered_json manifest = {
        {"schema_version", 1},
        {"name", package},
        {"version", version},
        {"summary", "benchmark plugin " + std::to_string(i)},
        {"license", "Apache-2.0"},
        {"requires", {{"iree", ">=3.10.0, <4.0.0"}}},
        {"runtime",
         {{"plugins",
           {{{"name", plugin},
             {"format", p.format},
             {"library", libs},
             {"imports", p.imports},
             {"parameters", {{"verbose", "0"}}},
             {"description",
              "a runtime plugin of the discovery benchmark"}}}}}}};
    writeFile(dir / "ireeplugin.json", manifest.dump(2) + "\n");
    input.plugins.push_back(std::move(p));
  }
  writeFile(prefix / "state" / "runtime.index",
            ireepkg::encodeRuntimeIndex(input));
  writeFile(prefix / "state" / "installed.json",
            "{\"schema_version\": 1, \"packages\": [\"...\"]}\n");
}

std::vector<Found> discoverWithIndex(const char *prefix, uint32_t flags) {
  std::vector<Found> out;
  ireepkg_runtime_index_t *index = nullptr;
  ireepkg_runtime_error_t *error = nullptr;
  ireepkg_runtime_plugin_list_t *list = nullptr;
  if (ireepkg_runtime_open(prefix, 0, &index, &error) ||
      ireepkg_runtime_list_plugins(index, nullptr, flags, &list, &error)) {
    std::fprintf(stderr, "%s\n", ireepkg_runtime_error_message(error));
    std::exit(1);
  }
  for (size_t i = 0; i < list->count; ++i) {
    const ireepkg_runtime_plugin_t &p = list->plugins[i];
    out.push_back({p.name, p.package, p.package_version, p.path, p.spec});
  }
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  return out;
}

std::vector<std::string> sortedEntries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.')
        names.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// What the index replaces: every package directory, every manifest.
std::vector<Found> discoverNaively(const std::string &prefix,
                                   const std::string &host) {
  std::vector<Found> out;
  const std::string arch = host.substr(host.find('-') + 1);
  const std::string packages = prefix + "/packages";
  for (const std::string &package : sortedEntries(packages)) {
    for (const std::string &version : sortedEntries(packages + "/" + package)) {
      const std::string dir = packages + "/" + package + "/" + version;
      std::ifstream in(dir + "/ireeplugin.json", std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
      if (m.is_discarded() || !m.contains("runtime"))
        continue;
      for (const auto &p :
           m["runtime"].value("plugins", nlohmann::json::array())) {
        const std::string format = p.value("format", "");
        const auto &libs = p["library"];
        std::string rel;
        bool embedded = format == "embedded-elf";
        if (embedded)
          rel = libs.contains(arch)    ? libs[arch].get<std::string>()
                : libs.contains("fat") ? libs["fat"].get<std::string>()
                                       : "";
        else if (format == "system-library" && libs.contains(host))
          rel = libs[host].get<std::string>();
        if (rel.empty())
          continue;
        std::string path = dir + "/" + rel;
        out.push_back({p.value("name", ""), m.value("name", ""),
                       m.value("version", ""), path,
                       embedded ? "embedded:" + path : path});
      }
    }
  }
  return out;
}

struct Stats {
  double medianUs, p90Us, minUs;
  /// The lowest of the rounds' medians: the cost when the machine was
  /// quietest (other processes share the caches and cores).
  double quietMedianUs;
  int iterations;
};

/// Times `run` `iterations` times, in 5 rounds after a warm-up.
template <typename F> Stats measure(int iterations, F &&run) {
  constexpr int kRounds = 5;
  std::vector<double> all;
  all.reserve(iterations);
  for (int i = 0; i < std::max(3, iterations / 20); ++i) // warm up
    run();
  double quiet = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    const int n = std::max(1, iterations / kRounds);
    std::vector<double> us;
    us.reserve(n);
    for (int i = 0; i < n; ++i) {
      auto start = Clock::now();
      run();
      us.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - start)
              .count());
    }
    all.insert(all.end(), us.begin(), us.end());
    std::sort(us.begin(), us.end());
    quiet = std::min(quiet, us[us.size() / 2]);
  }
  std::sort(all.begin(), all.end());
  return {all[all.size() / 2], all[all.size() * 9 / 10], all.front(), quiet,
          static_cast<int>(all.size())};
}

std::string json(const Stats &s) {
  std::ostringstream o;
  o << "{\"median_us\": " << s.medianUs << ", \"p90_us\": " << s.p90Us
    << ", \"min_us\": " << s.minUs
    << ", \"quiet_median_us\": " << s.quietMedianUs
    << ", \"iterations\": " << s.iterations << "}";
  return o.str();
}

} // namespace

int main(int argc, char **argv) {
  std::string work;
  int plugins = 1000, iterations = 5000, naiveIterations = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--work")
      work = argv[i + 1];
    else if (flag == "--plugins")
      plugins = std::atoi(argv[i + 1]);
    else if (flag == "--iterations")
      iterations = std::atoi(argv[i + 1]);
    else if (flag == "--naive-iterations")
      naiveIterations = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (work.empty() || plugins <= 0 || iterations <= 0 || naiveIterations <= 0) {
    std::fprintf(stderr,
                 "usage: %s --work DIR [--plugins N] [--iterations N] "
                 "[--naive-iterations N]\n",
                 argv[0]);
    return 2;
  }
  const std::string host = ireepkg_runtime_host_platform();
  const fs::path prefix = fs::absolute(work) / "prefix";
  makePrefix(prefix, plugins, host);
  const std::string p = prefix.string();

  const std::vector<Found> viaIndex = discoverWithIndex(p.c_str(), 0);
  const std::vector<Found> naive = discoverNaively(p, host);
  if (viaIndex != naive || (int)viaIndex.size() != plugins) {
    std::fprintf(stderr, "the index and the naive walk disagree (%zu vs %zu)\n",
                 viaIndex.size(), naive.size());
    return 1;
  }

  size_t found = 0;
  Stats api = measure(iterations, [&] {
    ireepkg_runtime_index_t *index = nullptr;
    ireepkg_runtime_plugin_list_t *list = nullptr;
    if (ireepkg_runtime_open(p.c_str(), 0, &index, nullptr) ||
        ireepkg_runtime_list_plugins(index, nullptr, 0, &list, nullptr))
      std::exit(1);
    found += list->count;
    ireepkg_runtime_free_plugin_list(list);
    ireepkg_runtime_close(index);
  });
  Stats apiChecked = measure(std::max(1, iterations / 10), [&] {
    ireepkg_runtime_index_t *index = nullptr;
    ireepkg_runtime_plugin_list_t *list = nullptr;
    if (ireepkg_runtime_open(p.c_str(), 0, &index, nullptr) ||
        ireepkg_runtime_list_plugins(
            index, nullptr, IREEPKG_RUNTIME_LIST_CHECK_FILES, &list, nullptr))
      std::exit(1);
    found += list->count;
    ireepkg_runtime_free_plugin_list(list);
    ireepkg_runtime_close(index);
  });
  ireepkg_runtime_index_t *open = nullptr;
  ireepkg_runtime_open(p.c_str(), 0, &open, nullptr);
  Stats listOnly = measure(iterations, [&] {
    ireepkg_runtime_plugin_list_t *list = nullptr;
    if (ireepkg_runtime_list_plugins(open, nullptr, 0, &list, nullptr))
      std::exit(1);
    found += list->count;
    ireepkg_runtime_free_plugin_list(list);
  });
  ireepkg_runtime_close(open);
  Stats naiveStats = measure(naiveIterations,
                             [&] { found += discoverNaively(p, host).size(); });

  std::printf(
      "{\"plugins\": %d, \"host\": \"%s\", \"index_bytes\": %ju, "
      "\"manifest_bytes\": %ju,\n",
      plugins, host.c_str(),
      (uintmax_t)fs::file_size(prefix / "state" / "runtime.index"),
      (uintmax_t)[&] {
        uintmax_t total = 0;
        for (const auto &e :
             fs::recursive_directory_iterator(prefix / "packages"))
          if (e.path().filename() == "ireeplugin.json")
            total += e.file_size();
        return total;
      }());
  std::printf(" \"index_open_list_close\": %s,\n", json(api).c_str());
  std::printf(" \"index_open_list_check_files_close\": %s,\n",
              json(apiChecked).c_str());
  std::printf(" \"index_list_only\": %s,\n", json(listOnly).c_str());
  std::printf(" \"naive_walk_parse\": %s,\n", json(naiveStats).c_str());
  std::printf(" \"ratio_naive_to_index\": %.1f,\n",
              naiveStats.medianUs / api.medianUs);
  std::printf(" \"found_total\": %zu}\n", found);
  return 0;
}
