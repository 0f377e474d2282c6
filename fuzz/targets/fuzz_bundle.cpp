//===- fuzz_bundle.cpp - Fuzzes an offline bundle's bundle.json ===//
//
// The bytes as the bundle.json of an offline bundle: the target packs them
// into a bundle file (a zstd tar, as `bundle create` writes) and asks
// `install <name>` to use that bundle, which extracts it into the cache,
// reads bundle.json (its registries and their directories) and opens the
// registry it names. Nothing is installed: the bundle holds no registry
// files, and the prefix does not exist.
//
// The bundle file is the tar `writeArchive` writes for the one member
// bundle.json, byte for byte (checked on the first input against
// `writeArchive` itself, for sizes around the 512-byte block), compressed
// in one call with a context kept for the whole run. `writeArchive`
// streams at level 9 without knowing the size, so zstd sets up its largest
// tables (tens of MiB, zeroed) for every input; that, not the bundle
// reading, took most of each execution. The zstd frame differs only in its
// window size and content-size field, both of which the reader decodes for
// any bundle.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package/package.h"
#include "ireepkg/workflow/workflow.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include <zstd.h>

using namespace ireepkg;

namespace {

/// A ustar header as writeArchive writes it: regular file, mode 0644,
/// owner 0:0, time 0.
std::string tarHeader(const std::string &name, uint64_t size) {
  std::string h(512, '\0');
  std::memcpy(&h[0], name.data(), name.size());
  auto octal = [&](size_t off, size_t len, uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llo", static_cast<int>(len - 1),
                  static_cast<unsigned long long>(v));
    std::memcpy(&h[off], buf, len - 1);
  };
  octal(100, 8, 0644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 0);
  std::memset(&h[148], ' ', 8);
  h[156] = '0';
  std::memcpy(&h[257], "ustar\0", 6);
  std::memcpy(&h[263], "00", 2);
  unsigned sum = 0;
  for (unsigned char c : h)
    sum += c;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06o", sum);
  std::memcpy(&h[148], buf, 7);
  h[155] = ' ';
  return h;
}

/// The uncompressed tar of a bundle holding only bundle.json.
std::string bundleTar(std::string_view json) {
  std::string tar = tarHeader("bundle.json", json.size());
  tar += json;
  tar.resize(tar.size() + (512 - json.size() % 512) % 512 + 1024, '\0');
  return tar;
}

/// Decompresses a whole zstd file (one or more frames).
std::string unzstd(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string z((std::istreambuf_iterator<char>(in)),
                std::istreambuf_iterator<char>());
  ZSTD_DCtx *d = ZSTD_createDCtx();
  std::string out;
  std::vector<char> buf(ZSTD_DStreamOutSize());
  ZSTD_inBuffer zin{z.data(), z.size(), 0};
  while (zin.pos < zin.size) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    size_t rc = ZSTD_decompressStream(d, &o, &zin);
    if (ZSTD_isError(rc))
      fuzz::invariantFailed("writeArchive wrote an unreadable zstd stream",
                            ZSTD_getErrorName(rc));
    out.append(buf.data(), o.pos);
  }
  ZSTD_freeDCtx(d);
  return out;
}

/// The harness's bundle is the tar writeArchive writes.
void checkAgainstWriteArchive(const std::string &dir) {
  std::string path = dir + "/reference.ireebundle";
  for (size_t n : {0, 1, 100, 511, 512, 513, 1024, 5000}) {
    std::string json(n, 'x');
    if (!writeArchive(path, {ArchiveMember{"bundle.json", json, "", false}}))
      fuzz::invariantFailed("writeArchive failed", path);
    if (unzstd(path) != bundleTar(json))
      fuzz::invariantFailed("the harness's tar differs from writeArchive's",
                            std::to_string(n) + " bytes of bundle.json");
  }
  fuzz::removeScratch("reference.ireebundle");
}

/// Writes the bundle file: the tar, zstd level 9 with a checksum as
/// writeArchive, in one call with a reused context.
void writeBundle(const std::string &path, std::string_view json) {
  static ZSTD_CCtx *cctx = [] {
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 9);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    return c;
  }();
  static std::string z;
  std::string tar = bundleTar(json);
  z.resize(ZSTD_compressBound(tar.size()));
  size_t n = ZSTD_compress2(cctx, z.data(), z.size(), tar.data(), tar.size());
  if (ZSTD_isError(n))
    fuzz::invariantFailed("zstd", ZSTD_getErrorName(n));
  fuzz::writeScratchFile(path.substr(path.rfind('/') + 1),
                         std::string_view(z.data(), n));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &dir = fuzz::scratchDir();
  static const bool checked = (checkAgainstWriteArchive(dir), true);
  (void)checked;
  std::string bundle = dir + "/fuzz.ireebundle";
  writeBundle(bundle, fuzz::bytes(data, size));
  workflow::InstallByNameRequest request;
  request.packages.push_back({"simple-mul", Constraint::any()});
  request.prefix = dir + "/no-prefix";
  workflow::Environment env;
  env.bundle = bundle;
  env.client.cacheRoot = dir + "/cache";
  env.client.offline = true;
  env.ignoreIree = true;
  Reporter reporter;
  (void)workflow::installByName(request, env, reporter);
  fuzz::removeScratch("cache");
  fuzz::removeScratch("no-prefix");
  return 0;
}
